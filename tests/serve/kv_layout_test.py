"""hearth-serve's KV layout and swap preemption end to end, on the tiny model
(issue 29):

- under the default layout (per-sequence streams) a member's conversation
  reuses its earlier turns: each later turn reports the earlier turn's whole
  blocks as cached prompt tokens;
- swap is on by default on streams, off on the unified pool; a unified
  pool too small for two long requests at once, given swap space, preempts
  one of them by swap (its KV saved to host memory and restored), and each answer
  equals the one the request got running alone (greedy; flash attention off, so
  llama.cpp's CPU results do not depend on the batch); the same with swap
  off (--swap_space_mib=0: recompute), which swaps nothing;
- bad --kv_layout, --flash_attention, --swap_space_mib, --n_ctx and
  --tiny_shape values stop the server with a message naming the flag and
  what it allows.
"""

import subprocess
import sys
import threading

from serve_harness import KEYS, Checks, Server, server_binary

checks = Checks("serve/kv_layout")
check = checks.check

QUESTIONS = ["What should we cook tonight for four people?",
             "And what about a dessert without nuts?",
             "Which of those can be made ahead on Sunday?"]
BLOCK = 16
# Two of these at once outgrow the 512-cell pool (2 x (180 + 300) > 512);
# one alone fits.
LONG_PROMPT_TOKENS = 180
LONG_ANSWER_TOKENS = 300
# The 4x256 model decodes slowly enough (milliseconds a step) that the two
# requests overlap.
SWAP_FLAGS = ("--kv_layout=unified", "--n_ctx=512", "--n_seq_max=2", "--prefix_cache_sequences=0",
              "--tiny_shape=4x256")


def cached(usage):
    return usage.get("prompt_tokens_details", {}).get("cached_tokens", -1)


def conversation(s):
    messages, turns = [], []
    for q in QUESTIONS:
        messages.append({"role": "user", "content": q})
        status, _, out = s.request("POST", "/v1/chat/completions",
                                   {"model": "tiny", "messages": messages, "temperature": 0,
                                    "max_tokens": 12}, key=KEYS["ana"])
        if not check(status == 200, "turn %d answered (%s)" % (len(turns) + 1, status)):
            return turns
        turns.append((out["usage"]["prompt_tokens"], cached(out["usage"])))
        messages.append({"role": "assistant", "content": out["choices"][0]["message"]["content"]})
    return turns


def prefix_hits_on_streams(binary):
    with Server(binary) as s:
        kv = s.status()["kv"]
        check(kv["host_blocks"] > 0, "swap is on by default on streams (%d host blocks)"
              % kv["host_blocks"])
        check(kv["streams"] > 1 and "streams of" in s.banner,
              "the default layout is per-sequence streams (%d streams; %s)"
              % (kv["streams"], s.banner.strip()))
        turns = conversation(s)
        for i in range(1, len(turns)):
            floor = turns[i - 1][0] // BLOCK * BLOCK
            check(turns[i][1] >= floor, "turn %d reuses turn %d's KV (%d cached >= %d of %d)"
                  % (i + 1, i, turns[i][1], floor, turns[i][0]))


def long_prompt(i):
    # Byte level: one token per byte. Distinct openings: no shared prefix.
    text = "Request %d: " % i + "the kitchen ledger lists bread, tea and rice. " * 8
    return text[:LONG_PROMPT_TOKENS]


def body(i):
    return {"model": "tiny", "prompt": long_prompt(i), "temperature": 0,
            "max_tokens": LONG_ANSWER_TOKENS, "stream_options": {"include_usage": True}}


def complete(s, i, on_event=None):
    """(answer, completion tokens) of long request i, streamed."""
    out = s.stream("/v1/completions", body(i), key=KEYS["ana"], timeout=300, on_event=on_event)
    return out["text"], (out["usage"] or {}).get("completion_tokens", -out["status"])


def both_at_once(binary, *flags):
    """Request 1 starts once request 0 streams its first token, so that both
    run at once; returns (answers, status kv, /metrics)."""
    with Server(binary, *SWAP_FLAGS, *flags) as s:
        first, out = threading.Event(), {}

        def zero():
            out[0] = complete(s, 0, on_event=lambda event, conn: first.set())
            first.set()

        t = threading.Thread(target=zero)
        t.start()
        first.wait(120)
        out[1] = complete(s, 1)
        t.join()
        return [out[0], out[1]], s.status()["kv"], s.metrics()


def swap_preemption(binary):
    with Server(binary, *SWAP_FLAGS, "--swap_space_mib=0") as s:
        alone = [complete(s, 0), complete(s, 1)]
    check(all(n == LONG_ANSWER_TOKENS for _, n in alone),
          "each long request alone gets its %d tokens (%s)" % (LONG_ANSWER_TOKENS,
                                                             [n for _, n in alone]))
    with Server(binary, *SWAP_FLAGS) as s:
        check(s.status()["kv"]["host_blocks"] == 0,
              "on the unified pool swap is off by default (restores failed beside kept cells)")
    answers, kv, metrics = both_at_once(binary, "--swap_space_mib=1024")
    check(kv["host_blocks"] > 0, "--swap_space_mib=1024 turns it on (%d host blocks)"
          % kv["host_blocks"])
    check(kv["swapped_out"] >= 1 and kv["swapped_in"] == kv["swapped_out"],
          "the full pool preempted by swap: %d out, %d in" % (kv["swapped_out"], kv["swapped_in"]))
    check(answers == alone, "and both answers equal the ones they got alone")
    answers, kv, metrics = both_at_once(binary, "--swap_space_mib=0")
    preempted = any("preemptions_total" in line and not line.startswith("#") and
                    float(line.split()[-1]) > 0 for line in metrics.splitlines())
    check(kv["host_blocks"] == 0 and kv["swapped_out"] == 0 and preempted,
          "with --swap_space_mib=0 it recomputes instead (no host blocks, none swapped, "
          "preemptions counted)")
    check(answers == alone, "with the same answers")


def bad_flags(binary):
    for flag, allowed in (("--kv_layout=paged", "allowed: streams, unified"),
                          ("--flash_attention=yes", "allowed: auto, on, off"),
                          ("--swap_space_mib=-2", "allowed: [-1, 1048576]"),
                          ("--n_ctx=0", "allowed: [1, 2^30]"),
                          ("--tiny_shape=4x100", "allowed: LAYERSxWIDTH")):
        run = subprocess.run([binary, "--port=0", flag], capture_output=True, text=True, timeout=60)
        name = flag.split("=")[0]
        check(run.returncode != 0 and name in run.stderr and allowed in run.stderr,
              "%s is refused naming the flag and what it allows (%r)" % (flag, run.stderr.strip()))


def main():
    binary = server_binary()
    prefix_hits_on_streams(binary)
    swap_preemption(binary)
    bad_flags(binary)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())

"""A document flood while a member talks to the house by voice: voice-class
TTFT over HTTP under the household policy must beat FIFO by at least 5x at
the 90th percentile, both measured in this one run.

dan's summariser posts a burst of long documents (the "documents" class,
his key's default); ben's voice assistant then sends short streamed
requests (the "voice" class) a few at a time while the burst is queued.
Under FIFO every voice request waits behind the documents that arrived
before it; under the household policy voice outranks documents, which run
on what is left. The engine is a small home GPU's: 8 sequences at once
(n_seq_max), so the burst fills every slot and the policy decides who gets
the next one. Sizes keep the whole test within seconds on 2 cores."""

import json
import os
import random
import sys
import threading
import time

from serve_harness import HOUSEHOLD_TOML, KEYS, Checks, Server, chat_body, percentile, server_binary

DOCUMENTS = 120
DOCUMENT_BYTES = 400
VOICE_REQUESTS = 12
VOICE_GAP_S = 0.12

checks = Checks("serve/voice_ttft")


def finite(x):
    return x if x != float("inf") else None  # strict JSON has no Infinity


def document(i):
    rng = random.Random(i)
    words = ["kitchen", "invoice", "garden", "school", "letter", "boiler", "receipt", "recipe"]
    text = " ".join(rng.choice(words) for _ in range(DOCUMENT_BYTES // 7))
    return text[:DOCUMENT_BYTES]


def run(binary, policy):
    # dan's summaries are many; no token quota here.
    household = HOUSEHOLD_TOML.replace("token_quota = 5000", "token_quota = 0")
    # Every document holds a connection from this one address until it is
    # answered: more than the default per-client cap.
    with Server(binary, "--policy=" + policy, "--n_ctx=8192", "--n_batch=256", "--n_seq_max=8", "--prefill_chunk=128",
                "--max_connections_per_client=256", household=household) as s:
        docs, voice = [], []
        lock = threading.Lock()

        def post_document(i):
            r = s.request("POST", "/v1/completions",
                          {"model": "tiny", "prompt": "Summarise:\n" + document(i) + "\nSummary:",
                           "max_tokens": 96, "temperature": 0}, key=KEYS["dan"], timeout=300)
            with lock:
                docs.append(r[0])

        def ask_by_voice(i):
            r = s.stream("/v1/chat/completions",
                         chat_body("Turn on the kitchen light %d" % i, max_tokens=8), key=KEYS["ben"])
            with lock:
                voice.append(r)

        threads = [threading.Thread(target=post_document, args=(i,)) for i in range(DOCUMENTS)]
        start = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(0.3)  # the burst is queued
        for i in range(VOICE_REQUESTS):
            t = threading.Thread(target=ask_by_voice, args=(i,))
            t.start()
            threads.append(t)
            time.sleep(VOICE_GAP_S)
        for t in threads:
            t.join()
        wall = time.monotonic() - start
        # Under FIFO a voice request can wait past the voice class's queue
        # limit and end with the server's timeout error instead of tokens; to
        # the person speaking that is worse than any answer, so it counts as
        # an infinite TTFT rather than being dropped from the percentile.
        answered = [r for r in voice if r["done"] and r["ttft_s"] is not None and r["error"] is None]
        gave_up = [r for r in voice if r not in answered]
        ttfts = [r["ttft_s"] for r in answered] + [float("inf")] * len(gave_up)
        checks.check(len(docs) == DOCUMENTS and all(st == 200 for st in docs),
                     "%s: all %d documents answered" % (policy, DOCUMENTS))
        checks.check(len(voice) == VOICE_REQUESTS and all(r["done"] or r["error"] is not None for r in voice),
                     "%s: every voice request ended, answered or with an error" % policy)
        if policy != "fifo":
            checks.check(not gave_up, "%s: all %d voice requests streamed to the end (%d did not)"
                         % (policy, VOICE_REQUESTS, len(gave_up)))
        elif gave_up:
            print("fifo: %d voice request(s) ended without an answer: %s"
                  % (len(gave_up), [r["error"] for r in gave_up][:2]), flush=True)
        status = s.status()
        voice_class = next(c for c in status["classes"] if c["name"] == "voice")
        p50, p90 = percentile(ttfts, 0.5), percentile(ttfts, 0.9)
        print("%-9s voice TTFT over HTTP: p50 %.3f s, p90 %.3f s, max %.3f s; server-side p90 %s; "
              "run %.1f s" % (policy, p50, p90, max(ttfts or [0]), voice_class["ttft_p90_s"], wall),
              flush=True)
        return p90, dict(policy=policy, p50_s=finite(p50), p90_s=finite(p90), unanswered=len(gave_up),
                         ttfts_s=[t for t in ttfts if t != float("inf")], wall_s=wall)


def main():
    binary = server_binary()
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "."
    household_p90, h = run(binary, "household")
    fifo_p90, f = run(binary, "fifo")
    ratio = fifo_p90 / household_p90 if household_p90 > 0 else float("inf")
    if ratio != ratio:  # both infinite: neither answered its voice requests
        ratio = 0.0
    print("voice p90 TTFT: FIFO %.3f s / household %.3f s = %.1fx" % (fifo_p90, household_p90, ratio))
    with open(os.path.join(out_dir, "voice_ttft.json"), "w") as fh:
        json.dump(dict(household=h, fifo=f, ratio=finite(ratio)), fh, indent=1)
    checks.check(ratio >= 5, "household p90 voice TTFT at least 5x better than FIFO (%.1fx)" % ratio)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())

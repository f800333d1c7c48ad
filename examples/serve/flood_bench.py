"""Flood-only output rate of hearth-serve on the tiny model, variant against
variant (bench/RESULTS.md, "hearth-serve KV layout (issue 29)").

Each run starts a fresh server with one variant's flags, sends --docs
documents of --doc_tokens tokens at once, each a streamed /v1/completions
call under one member's key with --new_tokens output tokens (--tiny_no_eos:
fixed length), and reports output tokens per second from the first send to
the last answer's end. Variants run interleaved, the order rotating per
repetition, and the ratios to the first variant are taken within each
repetition: this machine's load moves absolute rates by up to 2x, ratios
of neighbouring runs much less.

  python3 examples/serve/flood_bench.py build/examples/serve/hearth-serve \\
      --reps=3 --docs=16 --variant="unified=--kv_layout=unified" \\
      --variant="streams=--kv_layout=streams"

A variant is NAME=FLAGS, FLAGS comma-separated hearth-serve flags; each run
also gets --threads=1 --n_seq_max=8 --tiny_shape=4x256 (the model of
issue 29's figures) and the household below.
"""

import argparse
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "serve"))
from serve_harness import Server  # noqa: E402

HOUSEHOLD = """
[[member]]
name = "ana"
max_queued_requests = 0

[[key]]
key = "sk-ana"
member = "ana"
default_class = "documents"

[[key]]
key = "sk-admin"
role = "admin"
"""


def document(i, tokens):
    # The tiny model is byte level (one token per byte, no BOS): distinct
    # openings keep documents from hitting each other's cached prefixes.
    head = "Document %d of the household archive. " % i
    body = "".join("%s %d. " % (w, (i * 7919 + n) % 1000)
                   for n, w in enumerate(["Receipt", "Invoice", "Letter", "Note"] * 200))
    return (head + body)[:tokens]


def flood(s, docs, doc_tokens, new_tokens):
    results = [None] * docs

    def one(i):
        body = {"model": "tiny", "prompt": document(i, doc_tokens), "max_tokens": new_tokens,
                "temperature": 0, "stream_options": {"include_usage": True}}
        results[i] = s.stream("/v1/completions", body, key="sk-ana", timeout=1800)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(docs)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    tokens, failed = 0, []
    for r in results:
        if r["status"] != 200 or not r["usage"]:
            failed.append(r["error"] or r["status"])
            continue
        tokens += r["usage"]["completion_tokens"]
    # A failed call is reported, not fatal: how often a variant fails calls
    # is itself a figure (a swap the engine cannot restore fails its call).
    for f in failed[:1]:
        print("  failed call: %s" % (f,), flush=True)
    return tokens / wall, wall, len(failed)


def preempted(s):
    """(swap-outs, preemptions) the run made, from the status and /metrics."""
    swaps = s.status()["kv"]["swapped_out"]
    total = sum(float(line.split()[-1]) for line in s.metrics().splitlines()
                if line.startswith("hearth_preemptions_total{"))
    return swaps, int(total)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("binary")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--docs", type=int, default=16)
    p.add_argument("--doc_tokens", type=int, default=1500)
    p.add_argument("--new_tokens", type=int, default=64)
    p.add_argument("--variant", action="append", required=True, help="NAME=FLAG,FLAG,...")
    a = p.parse_args()
    variants = []
    for v in a.variant:
        name, _, flags = v.partition("=")
        variants.append((name, [f for f in flags.split(",") if f]))
    rates = {name: [] for name, _ in variants}
    ratios = {name: [] for name, _ in variants}
    for rep in range(a.reps):
        order = variants[rep % len(variants):] + variants[:rep % len(variants)]
        this = {}
        for name, flags in order:
            with Server(a.binary, "--threads=1", "--n_seq_max=8", "--tiny_shape=4x256", *flags,
                        household=HOUSEHOLD) as s:
                rate, wall, failed = flood(s, a.docs, a.doc_tokens, a.new_tokens)
                swaps, preemptions = preempted(s)
            this[name] = rate
            rates[name].append(rate)
            print("rep %d %-24s %7.1f output tok/s (%.1f s; %d preemptions, %d by swap; %d calls "
                  "failed)" % (rep, name, rate, wall, preemptions, swaps, failed), flush=True)
        for name, _ in variants:
            ratios[name].append(this[name] / this[variants[0][0]])
    print("\n%-24s %-22s %s" % ("variant", "output tok/s (range)", "median ratio to " + variants[0][0]))
    for name, flags in variants:
        r = rates[name]
        print("%-24s %6.1f-%-6.1f         %.2fx   (%s)" % (name, min(r), max(r),
                                                       statistics.median(ratios[name]),
                                                       " ".join(flags)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

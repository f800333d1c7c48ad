#!/usr/bin/env python3
"""Writes the small trace samples the suites replay for formats with no public
trace in ../shared/traces. Every row is synthetic (seeded, written by this
script), shaped like the public format it stands for; none is copied from a
real trace. Rerun to regenerate: python3 make_samples.py
"""
import json
import math
import random

rng = random.Random(2026)


def mooncake(path):
    # Chat sessions as Mooncake's conversation trace shows them: each turn
    # resends the history, so its hash ids extend the previous turn's; every
    # session starts with one of three shared system prompts (4 blocks).
    rows = []
    next_id = 100
    system = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    for s in range(60):
        t = rng.uniform(0, 900_000)
        ids = list(system[s % 3])
        for turn in range(rng.randint(2, 6)):
            new = rng.randint(1, 3)
            ids = ids + list(range(next_id, next_id + new))
            next_id += new
            if len(ids) > 24:
                break
            length = len(ids) * 512 - rng.randint(0, 511)
            out = max(1, int(rng.lognormvariate(math.log(180), 0.8)))
            rows.append({"timestamp": int(t), "input_length": length,
                         "output_length": min(out, 2000), "hash_ids": ids})
            t += rng.uniform(8_000, 90_000)
    rows.sort(key=lambda r: r["timestamp"])
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def pmf(median, sigma, lo, hi, bins=40):
    # A lognormal binned as ServeGen publishes it: "{tokens: probability}".
    counts = {}
    for _ in range(4000):
        v = int(min(hi, max(lo, rng.lognormvariate(math.log(median), sigma))))
        v = int(round(v / max(1, median // bins))) * max(1, median // bins)
        counts[v] = counts.get(v, 0) + 1
    total = sum(counts.values())
    return "{" + ", ".join(f"{k}: {c / total}" for k, c in sorted(counts.items())) + "}"


def servegen_datasets(folder):
    # Per-client length distributions, 6-hour windows over the first day.
    shapes = {142: (3000, 0.9, 400, 0.8), 143: (6000, 0.7, 800, 0.6),
              148: (300, 0.8, 120, 0.7), 112: (900, 1.0, 250, 0.9),
              61: (150, 0.6, 60, 0.6), 20: (1500, 1.1, 300, 1.0)}
    for client, (pm, ps, om, os_) in shapes.items():
        doc = {"0": {"input_tokens": "{}", "output_tokens": "{}"}}
        for w in range(1, 4):
            scale = 1 + 0.2 * (w - 2)
            doc[str(w * 21600)] = {
                "input_tokens": pmf(int(pm * scale), ps, 8, 16000),
                "output_tokens": pmf(int(om * scale), os_, 1, 2000)}
        with open(f"{folder}/chunk-{client}-dataset.json", "w") as f:
            json.dump(doc, f, indent=1)


def sharegpt(path):
    # A ShareGPT-shaped list: conversations of invented text, a few one-turn
    # ones (skipped by readers), and a few bare length pairs.
    words = ("the kettle garden recipe train homework budget invoice photo "
             "meeting weather story poem code bug test plan list summary").split()
    out = []
    for i in range(150):
        if i % 15 == 0:
            out.append({"prompt_len": rng.randint(500, 3000), "output_len": rng.randint(50, 600)})
            continue
        turns = []
        for k in range(rng.choice([1, 2, 2, 2, 4])):
            n = int(rng.lognormvariate(math.log(30 if k % 2 == 0 else 90), 0.8))
            text = " ".join(rng.choice(words) for _ in range(max(1, n)))
            turns.append({"from": "human" if k % 2 == 0 else "gpt", "value": text})
        out.append({"id": f"s{i}", "conversations": turns})
    with open(path, "w") as f:
        json.dump(out, f, indent=0)


def burstgpt(path):
    # BurstGPT's columns; bursts of calls, some failed (0 response tokens).
    rows = ["Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type"]
    t = 0
    for i in range(1500):
        t += rng.expovariate(1.0) if rng.random() < 0.8 else rng.expovariate(0.05)
        model = "GPT-4" if rng.random() < 0.2 else "ChatGPT"
        req = max(1, int(rng.lognormvariate(math.log(600), 1.0)))
        resp = 0 if rng.random() < 0.05 else max(1, int(rng.lognormvariate(math.log(200), 0.9)))
        kind = "API log" if rng.random() < 0.4 else "Conversation log"
        rows.append(f"{int(t)},{model},{min(req, 20000)},{min(resp, 4000)},"
                    f"{min(req, 20000) + min(resp, 4000)},{kind}")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")


def requests(path):
    # Hearth's request JSONL: voice questions, chats with follow-ups that
    # share their history, and an agent's chained calls over a shared tool
    # prompt (prefix_hashes 1..8).
    lines = []
    for s in range(40):
        t = rng.uniform(0, 1800)
        user = ["alice", "bob", "carol"][s % 3]
        if s % 4 == 0:
            lines.append({"user": user, "class": "voice", "arrival_s": round(t, 3),
                          "prompt_tokens": rng.randint(20, 80), "output_tokens": rng.randint(10, 60)})
            continue
        agent = s % 4 == 3
        cls = "agent" if agent else "chat"
        prompt = rng.randint(200, 900) + (128 if agent else 0)
        first = {"id": f"s{s}.0", "user": user, "class": cls, "arrival_s": round(t, 3),
                 "prompt_tokens": prompt, "output_tokens": rng.randint(30, 300)}
        if agent:
            first["prefix_hashes"] = list(range(1, 9))
        lines.append(first)
        prev = first
        for k in range(1, rng.randint(2, 5)):
            shared = prev["prompt_tokens"] + prev["output_tokens"]
            call = {"id": f"s{s}.{k}", "user": user, "class": cls, "parent": prev["id"],
                    "think_s": round(rng.uniform(0.5, 20) if agent else rng.uniform(5, 60), 2),
                    "prompt_tokens": shared + rng.randint(20, 200),
                    "output_tokens": rng.randint(20, 300), "shared_prefix_tokens": shared}
            lines.append(call)
            prev = call
    with open(path, "w") as f:
        for l in lines:
            f.write(json.dumps(l) + "\n")


# Quantiles (every 2.5%, min to max) of the lengths in Sarathi-Serve's chat
# trace, data/processed_traces/sharegpt_8k_filtered_stats_llama2_tokenizer.csv
# in github.com/microsoft/sarathi-serve (commit 72339db; 30,731 requests of
# openchat_sharegpt4 under 8k tokens, Llama-2 tokenizer): prompt median 1730,
# P90 5696; output median 415, P90 834, the figures of the paper's dataset
# table. Only these statistics are kept here, not the trace's rows.
SARATHI_PROMPT_QUANTILES = [
    1, 18, 29, 46, 74, 114, 180, 271, 382, 484, 580, 681, 777, 876, 973, 1081,
    1203, 1328, 1457, 1592, 1730, 1885, 2060, 2228, 2401, 2598, 2799, 3005,
    3235, 3472, 3735, 3992, 4278, 4577, 4918, 5288, 5696, 6106, 6563, 7056, 8141]
SARATHI_OUTPUT_QUANTILES = [
    2, 24, 44, 64, 84, 106, 130, 156, 181, 204, 228, 251, 271, 292, 312, 329,
    346, 363, 381, 397, 415, 433, 453, 472, 493, 512, 534, 557, 581, 604, 628,
    653, 683, 717, 754, 793, 834, 876, 920, 965, 1024]


def from_quantiles(r, table):
    # Inverse CDF, linear between the tabulated quantiles.
    u = r.random() * (len(table) - 1)
    i = min(int(u), len(table) - 2)
    return int(round(table[i] + (u - i) * (table[i + 1] - table[i])))


def sarathi_lengths(path, count=2048):
    # Length pairs drawn from those quantiles, prompt and output independently
    # (their log-lengths correlate at 0.06 in the trace), as many as each of
    # the paper's capacity runs sends. Its own generator, so that adding it
    # left the other samples as they were.
    # A pair over 8,192 tokens is drawn again: the trace kept none (its "8k"
    # filter), and the paper's runs cap sequences there (max_seq_len 8192).
    r = random.Random(2403)
    with open(path, "w") as f:
        for _ in range(count):
            prompt, output = 8192, 1
            while prompt + output > 8192:
                prompt = from_quantiles(r, SARATHI_PROMPT_QUANTILES)
                output = from_quantiles(r, SARATHI_OUTPUT_QUANTILES)
            f.write(json.dumps({"prompt_len": prompt, "output_len": output}) + "\n")


if __name__ == "__main__":
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    mooncake(f"{here}/mooncake_conversation_sample.jsonl")
    os.makedirs(f"{here}/servegen_datasets", exist_ok=True)
    servegen_datasets(f"{here}/servegen_datasets")
    sharegpt(f"{here}/sharegpt_sample.json")
    burstgpt(f"{here}/burstgpt_sample.csv")
    requests(f"{here}/requests_sample.jsonl")
    sarathi_lengths(f"{here}/sarathi_sharegpt_lengths.jsonl")

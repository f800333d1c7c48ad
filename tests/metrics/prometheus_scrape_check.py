#!/usr/bin/env python3
"""Scrapes Hearth's Prometheus text the way a Prometheus server would read it.

Runs the render program (prometheus_scrape_main.cc) into a temporary folder and
parses both of its outputs with prometheus_client's text parser
(text_string_to_metric_families), then checks what a dashboard or router relies
on: every family has the documented type, histogram buckets are the documented
ones, cumulative and end at +Inf, +Inf equals _count, _sum is consistent, the
partitions add up, and the vllm:* names appear only when enabled, with vLLM's
meaning (counts, and a 0-1 fraction for KV use).

Usage: prometheus_scrape_check.py RENDER_PROGRAM
"""

import math
import subprocess
import sys
import tempfile
from collections import defaultdict

from prometheus_client.parser import text_string_to_metric_families

# latency_histogram.h: LatencyHistogram::kBounds.
BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2,
          0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 5.0, 7.5, 10.0, 15.0, 20.0,
          30.0, 60.0, 120.0, 300.0, math.inf]

PARTITIONED_COUNTERS = [
    "requests_arrived", "requests_ended", "preemptions", "retries",
    "prefill_tokens", "decode_tokens", "output_tokens", "weighted_service",
    "slo_met", "slo_eligible", "slo_requests", "prefix_cache_queried_tokens",
    "prefix_cache_hit_tokens"]
HISTOGRAMS = ["queue_wait_seconds", "ttft_seconds", "itl_seconds", "e2e_seconds"]
GAUGES = [
    "prefix_cache_hit_ratio", "output_tokens_per_second",
    "goodput_requests_per_second", "jain_index", "max_backlogged_service_gap",
    "requests", "kv_device_blocks", "kv_device_blocks_usable", "kv_usage_ratio",
    "kv_host_blocks", "resident_weight_bytes"]
ROUTER = ["vllm:num_requests_waiting", "vllm:num_requests_running",
          "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"]
OUTCOMES = {"finished", "cancelled", "rejected", "timed_out", "failed"}

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def expected_types(user_histograms):
    # prometheus_client names a counter family without its _total suffix.
    types = {}
    for name in PARTITIONED_COUNTERS:
        types["hearth_" + name] = "counter"
        types["hearth_user_" + name] = "counter"
    for name in HISTOGRAMS:
        types["hearth_" + name] = "histogram"
        if user_histograms:
            types["hearth_user_" + name] = "histogram"
    for name in GAUGES:
        types["hearth_" + name] = "gauge"
    return types


def series_key(labels):
    return tuple(sorted((k, v) for k, v in labels.items() if k != "le"))


def check_histogram(family):
    buckets = defaultdict(list)
    sums, counts = {}, {}
    for s in family.samples:
        key = series_key(s.labels)
        if s.name == family.name + "_bucket":
            buckets[key].append((float(s.labels["le"]), s.value))
        elif s.name == family.name + "_sum":
            sums[key] = s.value
        elif s.name == family.name + "_count":
            counts[key] = s.value
        else:
            check(False, f"{family.name}: unexpected sample {s.name}")
    check(len(buckets) > 0, f"{family.name}: no series")
    for key, bs in buckets.items():
        where = f"{family.name}{dict(key)}"
        les = [le for le, _ in bs]
        check(les == BOUNDS, f"{where}: buckets {les} are not the documented ones")
        values = [v for _, v in bs]
        check(all(a <= b for a, b in zip(values, values[1:])),
              f"{where}: buckets not cumulative: {values}")
        check(key in counts and values[-1] == counts[key],
              f"{where}: +Inf bucket {values[-1]} != _count {counts.get(key)}")
        check(key in sums, f"{where}: no _sum")
        total = sums.get(key, 0.0)
        # Each observation lies in (previous bound, its bound]: the sum is
        # bounded by the bucket edges (the +Inf bucket only from below).
        low = high = 0.0
        previous_count, previous_le = 0.0, 0.0
        for le, v in bs:
            n = v - previous_count
            low += n * previous_le
            if le != math.inf:
                high += n * le
            elif n > 0:
                high = math.inf
            previous_count, previous_le = v, le
        check(low - 1e-9 <= total <= high + 1e-9,
              f"{where}: _sum {total} outside [{low}, {high}] the buckets allow")


def scrape(text, router, user_histograms):
    families = {f.name: f for f in text_string_to_metric_families(text)}
    type_lines = [l.split()[2] for l in text.splitlines() if l.startswith("# TYPE ")]
    check(len(type_lines) == len(set(type_lines)), "a family is declared twice")
    sample_lines = [l for l in text.splitlines() if l and not l.startswith("#")]
    parsed = sum(len(f.samples) for f in families.values())
    check(parsed == len(sample_lines),
          f"{len(sample_lines)} sample lines but the parser read {parsed}")

    for name, kind in expected_types(user_histograms).items():
        check(name in families, f"missing family {name}")
        if name in families:
            check(families[name].type == kind,
                  f"{name} is a {families[name].type}, expected {kind}")
            check(families[name].documentation, f"{name} has no HELP")
    for name, family in families.items():
        if family.type == "histogram":
            check_histogram(family)
        if family.type == "counter":
            check(all(s.value >= 0 for s in family.samples), f"{name}: negative counter")
        if family.type == "summary":
            check(False, f"{name}: a summary; Hearth exports histograms")
    check("hearth_user_ttft_seconds" in families or not user_histograms,
          "per-user histograms missing")
    check("hearth_user_ttft_seconds" not in families or user_histograms,
          "per-user histograms written without being asked for")

    def values(name, sample=None):
        return {series_key(s.labels): s.value for s in families[name].samples
                if s.name == (sample or name)}

    # Outcomes counted apart; classes and users each partition the requests.
    ended = families["hearth_requests_ended"].samples
    check({s.labels["outcome"] for s in ended} == OUTCOMES, "outcome labels")
    for prefix in ("hearth_", "hearth_user_"):
        arrived = values(prefix + "requests_arrived", prefix + "requests_arrived_total")
        ended_sum = sum(s.value for s in families[prefix + "requests_ended"].samples)
        check(ended_sum <= sum(arrived.values()), f"{prefix}: more ended than arrived")
    class_arrived = sum(values("hearth_requests_arrived", "hearth_requests_arrived_total").values())
    user_arrived = sum(values("hearth_user_requests_arrived",
                              "hearth_user_requests_arrived_total").values())
    check(class_arrived == user_arrived and class_arrived > 0,
          f"classes ({class_arrived}) and users ({user_arrived}) disagree")
    rejected = sum(s.value for s in ended if s.labels["outcome"] == "rejected")
    check(rejected >= 1, "the request stamped ten minutes ahead is not counted rejected")
    users = {s.labels["user"] for s in families["hearth_user_requests_arrived"].samples}
    check(('carol "c"' in users) == (not router), f"user labels {users}")
    check(("_other" in users) == router, f"user labels {users}")

    # SLO attainment: every series has kind and met; each kind counts a
    # request at most once (met or not), and users and classes agree.
    judged = {}
    for prefix in ("hearth_", "hearth_user_"):
        samples = families[prefix + "slo_requests"].samples
        check({(s.labels["kind"], s.labels["met"]) for s in samples} ==
              {(k, m) for k in ("ttft", "tpot") for m in ("true", "false")},
              f"{prefix}slo_requests labels {[s.labels for s in samples]}")
        ended_sum = sum(s.value for s in families[prefix + "requests_ended"].samples)
        for kind in ("ttft", "tpot"):
            n = sum(s.value for s in samples if s.labels["kind"] == kind)
            check(n <= ended_sum, f"{prefix}: {n} judged for {kind}, {ended_sum} ended")
            judged[(prefix, kind)] = n
    for kind in ("ttft", "tpot"):
        check(judged[("hearth_", kind)] == judged[("hearth_user_", kind)] > 0,
              f"{kind} attainment: classes and users disagree or judged none: {judged}")

    phases = {dict(k)["phase"]: v for k, v in values("hearth_requests").items()}
    check(set(phases) == {"queued", "waiting", "preparing", "held", "running", "swapped"},
          f"phases {phases}")
    check(sum(phases.values()) > 0, "a mid-run scrape shows no live request")
    ratio = values("hearth_kv_usage_ratio")[()]
    check(0 <= ratio <= 1, f"kv usage {ratio}")
    hit = values("hearth_prefix_cache_hit_ratio")[()]
    check(0 < hit < 1, f"prefix hit ratio {hit}: the shared system prompt never hit")

    present = [n for n in ROUTER if n in families]
    if not router:
        check(not present and "vllm:" not in text, f"router names without asking: {present}")
        return
    check(present == ROUTER, f"router names {present}")
    for name in ROUTER:
        f = families.get(name)
        if f is None:
            continue
        check(f.type == "gauge", f"{name} is a {f.type}")
        check(len(f.samples) == 1 and f.samples[0].labels == {"model_name": "household-8b"},
              f"{name} labels {[s.labels for s in f.samples]}")
    router_value = {n: families[n].samples[0].value for n in present}
    check(router_value["vllm:num_requests_running"] == phases["running"], "running")
    check(router_value["vllm:num_requests_waiting"] ==
          sum(v for p, v in phases.items() if p != "running"), "waiting")
    for name in ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"):
        check(router_value[name] == ratio, f"{name} is not a 0-1 fraction equal to KV usage")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.argv[1], out], check=True)
        for name, router in (("plain.prom", False), ("router.prom", True)):
            with open(f"{out}/{name}") as f:
                text = f.read()
            before = len(failures)
            scrape(text, router=router, user_histograms=router)
            families = len(list(text_string_to_metric_families(text)))
            print(f"{name}: {families} families, {len(text.splitlines())} lines, "
                  f"{len(failures) - before} problems")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Compares the step benchmarks of two Release builds in one run: rounds of
# base then new, interleaved so that the machine's drift hits both, and the
# median CPU time of each benchmark with the new/base ratio and allocations
# per step. Ratios from one run are what to compare; absolute times on a
# shared VM move by ±10% between runs.
#
#   bench/ab_compare.sh BASE_BUILD NEW_BUILD [ROUNDS] [FILTER]
#
# Each build needs the targets hearth_step_bench and hearth_policy_step_bench
# (configure with -DCMAKE_BUILD_TYPE=Release). To measure a change against
# the commit before it:
#   git worktree add /tmp/base <commit>
#   cmake -S /tmp/base -B /tmp/base/build-rel -DCMAKE_BUILD_TYPE=Release \
#         -DHEARTH_BUILD_TESTS=OFF -DHEARTH_BUILD_EXAMPLES=OFF
#   cmake --build /tmp/base/build-rel -j --target hearth_step_bench hearth_policy_step_bench
#   bench/ab_compare.sh /tmp/base/build-rel build-rel 5
set -euo pipefail
base=${1:?base build dir}; new=${2:?new build dir}; rounds=${3:-5}
filter=${4:-/1024/10000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((i = 1; i <= rounds; ++i)); do
  for side in base new; do
    dir=$base; [[ $side == new ]] && dir=$new
    "$dir/bench/hearth_step_bench" --benchmark_filter="BM_SteadyDecode(Step|SchedulerOnly)$filter" \
      --benchmark_format=json > "$out/step_${side}_$i.json" 2>/dev/null
    "$dir/bench/policy/hearth_policy_step_bench" --benchmark_filter="$filter" \
      --benchmark_format=json > "$out/policy_${side}_$i.json" 2>/dev/null
  done
done
python3 - "$out" <<'PY'
import collections, glob, json, os, statistics, sys
times = collections.defaultdict(lambda: collections.defaultdict(list))
allocs = collections.defaultdict(dict)
for path in glob.glob(os.path.join(sys.argv[1], '*.json')):
    side = os.path.basename(path).split('_')[1]
    for b in json.load(open(path))['benchmarks']:
        name = b['name'].split('/iterations')[0]
        # SchedulerOnly times itself (manual time); the rest is CPU time.
        times[name][side].append(b['real_time'] if 'manual_time' in b['name'] else b['cpu_time'])
        if 'allocs/step' in b:
            allocs[name][side] = b['allocs/step']
print(f"| benchmark | base µs | new µs | new / base | allocations per step, base → new |")
print(f"|---|---:|---:|---:|---|")
only = sorted(n for n in times if len(times[n]) < 2)
for name in sorted(n for n in times if len(times[n]) == 2):
    b = statistics.median(times[name]['base']); n = statistics.median(times[name]['new'])
    a = allocs.get(name, {})
    alloc = f"{a['base']:.2f} → {a['new']:.2f}" if 'base' in a and 'new' in a else "–"
    print(f"| {name} | {b:.2f} | {n:.2f} | {n / b:.3f} | {alloc} |")
if only:
    print()
    print("In one build only (no ratio): " + ", ".join(
        f"{n} ({next(iter(times[n]))})" for n in only))
PY

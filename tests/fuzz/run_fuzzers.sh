#!/usr/bin/env bash
# Runs every fuzz target for SECONDS_PER_TARGET seconds, JOBS targets at a
# time, and writes a summary table to stdout and to build-fuzz/fuzz_summary.md.
#   tests/fuzz/run_fuzzers.sh [SECONDS_PER_TARGET=60] [JOBS=1] [TARGET...]
# Builds build-fuzz/ first (Clang, HEARTH_FUZZ=ON) unless it is up to date.
# Each target grows its own corpus in build-fuzz/fuzz/corpus/<target>,
# started from a copy of tests/fuzz/corpus/<target> (the committed seeds are
# never written); crashes land in build-fuzz/fuzz/artifacts/<target>/ and
# logs in build-fuzz/fuzz/logs/. Exits non-zero when any target crashed.
# Environment: BUILD_DIR (default build-fuzz; a tree configured with
# HEARTH_FUZZ=ON is built as configured), FUZZ_RSS_MB (default 2048),
# FUZZ_SEED (libFuzzer's -seed; unset: a new random seed each run).
set -euo pipefail
seconds=${1:-60}
jobs=${2:-1}
shift $(( $# < 2 ? $# : 2 ))
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
rss_mb=${FUZZ_RSS_MB:-2048}
seed=()
[[ -n ${FUZZ_SEED:-} ]] && seed=(-seed="$FUZZ_SEED")
all_targets=(scheduler_ops options scenario azure_trace servegen_trace agent_trace trace_readers
             serve_request household_config)
targets=("${@:-${all_targets[@]}}")

# A tree already configured with HEARTH_FUZZ=ON (CI's sanitizer stage builds
# its tests and the fuzz targets in one tree) is built as it is configured.
if ! grep -q '^HEARTH_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DHEARTH_FUZZ=ON -DHEARTH_WITH_CUDA=OFF \
    -DHEARTH_BUILD_TESTS=OFF -DHEARTH_BUILD_BENCH=OFF -DHEARTH_BUILD_EXAMPLES=OFF \
    "${launcher[@]}" >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/%/_fuzzer}"

work=$build/fuzz
mkdir -p "$work/logs"

run_one() {
  local t=$1 corpus=$work/corpus/$1 artifacts=$work/artifacts/$1/
  mkdir -p "$corpus" "$artifacts"
  cp -n "$root/tests/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
  local dict=()
  [[ -f $root/tests/fuzz/dict/$t.dict ]] && dict=(-dict="$root/tests/fuzz/dict/$t.dict")
  local start=$(date +%s) rc=0
  # detect_leaks: a leak is a bug too; the scheduler frees all on destruction.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb="$rss_mb" -print_final_stats=1 -artifact_prefix="$artifacts" \
      "${seed[@]}" "${dict[@]}" "$corpus" >"$work/logs/$t.log" 2>&1 || rc=$?
  echo $(( $(date +%s) - start )) >"$work/logs/$t.seconds"
  echo "$rc" >"$work/logs/$t.rc"
}

running=0
for t in "${targets[@]}"; do
  if (( running >= jobs )); then wait -n || true; running=$((running - 1)); fi
  run_one "$t" &
  running=$((running + 1))
done
wait

summary=$build/fuzz_summary.md
failed=0
# Written to the file first: a pipe into tee would run the loop in a
# subshell and lose `failed`.
{
  echo "| target | seconds | executions | exec/s | cov | ft | corpus | crashes |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for t in "${targets[@]}"; do
    log=$work/logs/$t.log
    # A target that crashed at once reports none of these; `|| true` keeps
    # `set -e` from ending the summary there.
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
    files=$(find "$work/corpus/$t" -type f | wc -l)
    crashes=$(find "$work/artifacts/$t" -type f | wc -l)
    rc=$(cat "$work/logs/$t.rc")
    if (( rc != 0 || crashes > 0 )); then failed=1; fi
    echo "| $t | $(cat "$work/logs/$t.seconds") | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | $files | $crashes |"
  done
} >"$summary"
cat "$summary"
echo "summary: $summary"
if (( failed )); then
  echo "fuzz: a target crashed or failed; see $work/logs and $work/artifacts" >&2
  for t in "${targets[@]}"; do
    if [[ $(cat "$work/logs/$t.rc") != 0 ]]; then
      echo "--- $t ($work/logs/$t.log)" >&2
      grep -E -A25 'ERROR|FUZZ CHECK FAILED|runtime error' "$work/logs/$t.log" | head -60 >&2 || true
    fi
  done
  exit 1
fi

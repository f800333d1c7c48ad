#!/usr/bin/env bash
# Runs every scenario of the policy suite under each of its policies, measures
# the simulator's speed, and writes bench/suites/RESULTS.md.
#
#   bench/suites/run_suite.sh [path/to/hearth_sim_cli]
#
# Outputs per scenario land in bench/suites/results/<scenario>/ (report.md,
# results.csv, results.json, PNG plots). Needs gnuplot and python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cli=${1:-}
if [[ -z "$cli" ]]; then
  for c in "$here/../../build/examples/simulator/hearth_sim_cli" "$(command -v hearth_sim_cli || true)"; do
    if [[ -n "$c" && -x "$c" ]]; then cli=$c; break; fi
  done
fi
[[ -x "$cli" ]] || { echo "usage: $0 path/to/hearth_sim_cli" >&2; exit 2; }
out="$here/results"
mkdir -p "$out"

# shellcheck source=scenarios.sh
source "$here/scenarios.sh"
scenarios=("${suite_scenarios[@]}")
for s in "${scenarios[@]}"; do
  echo "== $s" >&2
  "$cli" --config="$here/$s.toml" --out="$out/$s" --quiet 2>&1 | tee "$out/$s.log" >&2
done

# SLO capacity per policy by bisection on load, and attainment per class.
echo "== slo_capacity household_evening_90" >&2
"$cli" --config="$here/household_evening_90.toml" --slo_capacity \
  > "$out/slo_capacity_household_evening_90.md"

# Sarathi-Serve's capacity, chunked vs unchunked, under its two SLOs
# (papers/sarathi_serve.md; about 20 s at -O3).
for v in relaxed strict; do
  echo "== capacity sarathi_serve_mistral7b_$v" >&2
  mkdir -p "$out/sarathi_serve_mistral7b_$v"
  "$cli" --config="$here/sarathi_serve_mistral7b_$v.toml" --capacity \
    > "$out/sarathi_serve_mistral7b_$v/capacity.md" 2> "$out/sarathi_serve_mistral7b_$v.log"
done

# No collapse: every scenario at 70-110% of FIFO's capacity, every policy
# against FIFO (about half an hour at -O1 on a shared 2-core machine).
"$here/run_load_grid.sh" "$cli"

# Simulator speed, single-threaded: CPU seconds (user + sys) of the whole
# program (trace parsing, simulation, report) and wall seconds.
speed() {  # name config policies
  local name=$1 config=$2 policies=$3
  /usr/bin/time -f "$name %U %S %e" -o "$out/time_$name.txt" \
    "$cli" --config="$config" --out="$out/speed_$name" --policies="$policies" \
    --plots=false --quiet > /dev/null 2> "$out/speed_$name.log"
  cat "$out/time_$name.txt"
}
{
  speed azure_conv_fifo "$here/azure_conv_4090.toml" fifo
  speed synthetic_day_1m "$here/synthetic_day_1m.toml" fifo
} > "$out/timing.txt"
grep -h "requests in the workload" "$out"/speed_*.log > "$out/speed_requests.txt" || true

python3 "$here/summarize.py" "$here" > "$here/RESULTS.md"
echo "wrote $here/RESULTS.md" >&2

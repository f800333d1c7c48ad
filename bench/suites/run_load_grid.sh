#!/usr/bin/env bash
# The no-collapse check (issue 11): every suite scenario at 70%, 90%, 100% and
# 110% of FIFO's saturated capacity, every policy against FIFO of the same
# run (hearth_sim_cli --load_grid, see include/hearth/sim/load_grid.h), each
# cell summed over three workload draws (--load_grid_seeds=3): near capacity
# FIFO preempts a handful of times in thousands of requests, too few for one
# draw's ratio to mean anything.
# Writes results/load_grid/<scenario>.md and results/load_grid/timing.txt;
# summarize.py puts the tables and the list of violating cells in RESULTS.md.
#
#   bench/suites/run_load_grid.sh [path/to/hearth_sim_cli]
#
# The scenarios are scenarios.sh's (synthetic_day_1m, the speed benchmark, is not one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cli=${1:-$here/../../build/examples/simulator/hearth_sim_cli}
[[ -x "$cli" ]] || { echo "usage: $0 path/to/hearth_sim_cli" >&2; exit 2; }
out="$here/results/load_grid"
mkdir -p "$out"
# shellcheck source=scenarios.sh
source "$here/scenarios.sh"
scenarios=("${suite_scenarios[@]}")
: > "$out/timing.txt"
for s in "${scenarios[@]}"; do
  echo "== load grid $s" >&2
  /usr/bin/time -f "$s %e" -a -o "$out/timing.txt" \
    "$cli" --config="$here/$s.toml" --load_grid=0.7,0.9,1.0,1.1 --load_grid_seeds=3 \
    > "$out/$s.md" 2> "$out/$s.log"
done

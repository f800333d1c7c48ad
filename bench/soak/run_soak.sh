#!/usr/bin/env bash
# The soak of issue 15: every policy in both preemption modes (1,000,000
# requests each), then one 5,000,000-request run (vtc, recompute) for RSS
# growth. One process per run, so each run's RSS is its own. Prints the
# markdown tables; exits 1 when any run failed.
#
#   bench/soak/run_soak.sh BUILD_DIR [REQUESTS_PER_RUN] [LONG_RUN_REQUESTS] [SEED]
#
# BUILD_DIR is a Release build with benchmarks (cmake --build BUILD_DIR
# --target hearth_soak). Smaller runs: bench/soak/run_soak.sh build-rel 100000 500000.
set -euo pipefail

build=${1:?usage: run_soak.sh BUILD_DIR [REQUESTS_PER_RUN] [LONG_RUN_REQUESTS] [SEED]}
requests=${2:-1000000}
long_requests=${3:-5000000}
seed=${4:-1}
soak="$build/bench/soak/hearth_soak"
[[ -x "$soak" ]] || { echo "no $soak; build the hearth_soak target first" >&2; exit 2; }

tables=$(mktemp -d)
trap 'rm -rf "$tables"' EXIT
status=0
start=$SECONDS

for policy in $("$soak" --list_policies); do
  for mode in recompute swap; do
    "$soak" --policies="$policy" --modes="$mode" --requests="$requests" --seed="$seed" \
      --tables=summary,injections,rss_rows,problems --append_to_dir="$tables" || status=1
  done
done

echo "## Soak matrix: $requests requests per run, seed $seed"
for table in summary injections rss_rows; do
  echo
  cat "$tables/$table.md"
done
if [[ -s "$tables/problems.md" ]]; then
  echo
  cat "$tables/problems.md"
fi

echo
echo "## Long run: vtc / recompute, $long_requests requests, seed $seed"
"$soak" --policies=vtc --modes=recompute --requests="$long_requests" --seed="$seed" \
  --tables=summary,rss,problems || status=1

echo
echo "Total wall time: $((SECONDS - start)) s"
exit $status

#!/usr/bin/env bash
# Sets up (missing Debian packages), builds, and runs the main demo: the
# household evening at 90% load replayed through the real scheduler on a
# simulated RTX 4090, FIFO against the household policy side by side, with
# plots and Perfetto timelines written to sim_out/evening/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
bash cmake/scripts/setup_debian.sh
jobs=$(nproc)
cmake -S . -B build-demo -DCMAKE_BUILD_TYPE=Release -DHEARTH_BUILD_TESTS=OFF \
      -DHEARTH_BUILD_BENCH=OFF -DHEARTH_WITH_CUDA=OFF >/dev/null
cmake --build build-demo -j"$jobs" --target hearth_sim_cli hearth_host_engine
./build-demo/examples/simulator/hearth_sim_cli \
    --config=bench/suites/household_evening_90.toml --policies=fifo,household \
    --timeline --out=sim_out/evening "$@"
cat <<'MSG'

Plots:     sim_out/evening/*.png (TTFT CDF per class, service per user, queue depth, throughput)
Timelines: sim_out/evening/timeline_fifo.json, timeline_household.json (open in ui.perfetto.dev)
Tables:    sim_out/evening/report.md, results.csv, results.json
Other scenarios: bench/suites/*.toml (bench/suites/run_suite.sh runs them all).
The smallest host engine: ./build-demo/examples/host_engine/hearth_host_engine
MSG

#!/usr/bin/env bash
# Sets up (missing Debian packages), builds, and runs the main demo.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
bash cmake/scripts/setup_debian.sh
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHEARTH_BUILD_TESTS=OFF -DHEARTH_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$jobs" --target hearth_host_engine
./build/examples/host_engine/hearth_host_engine "$@"

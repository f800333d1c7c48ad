#!/usr/bin/env bash
# Sets up (missing Debian packages), builds, and runs every test:
#   1. the normal build (optimised, CUDA when nvcc is present), all tests,
#      including the installed package building a consumer and the examples;
#   2. ASan + UBSan build with Clang, all tests (hearth-serve's end-to-end
#      API test among them); the same tree holds the libFuzzer targets;
#   3. TSan build, the threaded tests (CTest label "threads");
#   4. each fuzz target of stage 2's tree for 20 s over a copy of its seed
#      corpus (tests/fuzz/run_fuzzers.sh).
# Build trees: build/, build-asan/, build-tsan/.
# Sanitizer trees keep line tables only (-gline-tables-only, -g1): reports
# still name file and line, and full debug info doubled their compile time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
bash cmake/scripts/setup_debian.sh
jobs=$(nproc)
start=$(date +%s)

step() { printf '\n=== %s (%ds)\n' "$1" $(( $(date +%s) - start )); }

step "normal build"
# -O1 without debug info: CI's two cores spend their time compiling, and the
# tests need correctness, not speed (benchmarks build separately, optimised).
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DHEARTH_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest -j"$jobs" --no-tests=error --output-on-failure --timeout 900)

step "ASan + UBSan build (Clang, with the fuzz targets)"
# Of the examples, hearth-serve alone: its end-to-end API test runs here too.
# HEARTH_FUZZ adds coverage counters, so that one sanitizer tree serves the
# tests and stage 4 (a separate fuzz tree cost ~3 min more); counters only,
# as traced comparisons slow these tests 3-5x (cmake/HearthOptions.cmake).
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
      -DHEARTH_FUZZ=ON -DHEARTH_FUZZ_COVERAGE=counters \
      -DHEARTH_WITH_CUDA=OFF -DHEARTH_BUILD_BENCH=OFF -DHEARTH_BUILD_EXAMPLES=OFF \
      -DHEARTH_BUILD_SERVE=ON -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest -j"$jobs" --no-tests=error --output-on-failure --timeout 1800)

step "TSan build (threaded tests)"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DHEARTH_SANITIZE=thread \
      -DHEARTH_WITH_CUDA=OFF -DHEARTH_BUILD_BENCH=OFF -DHEARTH_BUILD_EXAMPLES=OFF \
      -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" >/dev/null
cmake --build build-tsan -j"$jobs" --target hearth_scheduler_tests hearth_jobs_tests \
      hearth_metrics_tests
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest -L threads --no-tests=error --output-on-failure --timeout 1800)

step "fuzz (bounded)"
# Any crash, sanitizer report, leak, timeout (10 s per input) or broken
# invariant fails the stage; the longer runs are tests/fuzz/README.md's.
# A fixed seed: the stage repeats the same exploration from the committed
# corpus, so a red run is reproducible; new ground is the long runs' job.
BUILD_DIR=$root/build-asan FUZZ_SEED=1 tests/fuzz/run_fuzzers.sh 20 "$jobs"

step "all test stages passed"

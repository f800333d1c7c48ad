#!/usr/bin/env bash
# One-shot GPU check for issue 5, meant to finish in under 8 minutes on one
# GPU: builds Hearth with CUDA for the local GPU only, runs the [gpu] tests
# (CUDA float32 vs the CPU reference, bfloat16 tolerance, scheduling
# invariance on the GPU, malformed plans, the 8B shape), the decode
# paged-attention bandwidth benchmark and the step-cost calibration, and
# writes every figure to $OUT_DIR (default bench/gpu/results):
#   gpu_tests.txt            test log
#   decode_attention.csv/.txt bandwidth table (fraction of copy bandwidth)
#   calibration_points.csv   every timed step composition
#   <gpu>_llama8b.toml       the fitted profile for the simulator
#   calibration.txt          fit and held-out error
#   *.svg                    figures, when gnuplot is installed
#   summary.txt              timings of each stage
# Usage: bench/gpu/run_gpu_checks.sh [--quick]
set -uo pipefail
T0=$(date +%s)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT_DIR:-$ROOT/bench/gpu/results}
BUILD=${BUILD_DIR:-$ROOT/build-gpu}
QUICK=${1:-}
# Overridable for a dry run on a machine without a GPU ("native" needs one).
CUDA_ARCH=${CUDA_ARCH:-native}
BUILD_TYPE=${BUILD_TYPE:-Release}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
stage() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$SUMMARY"; }
# Exit status 2 of the measurement programs means "no GPU here".
report() {
  case $2 in
    0) ;;
    2) stage "$1 SKIPPED: no usable GPU"; status=1 ;;
    *) stage "$1 FAILED rc=$2"; status=1 ;;
  esac
}
export PATH=/usr/local/cuda/bin:$PATH

stage "configure (CUDA for this GPU only)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >> "$SUMMARY" 2>&1 || true
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DHEARTH_WITH_CUDA=ON \
  -DHEARTH_CUDA_ARCHITECTURES="$CUDA_ARCH" -DHEARTH_BUILD_TESTS=ON \
  -DHEARTH_BUILD_BENCH=ON -DHEARTH_BUILD_EXAMPLES=OFF > "$OUT/configure.log" 2>&1 \
  || { stage "configure FAILED (see configure.log)"; exit 1; }
stage "build"
cmake --build "$BUILD" -j"$(nproc)" --target hearth_exec_tests \
  hearth_gpu_decode_attention hearth_gpu_calibrate > "$OUT/build.log" 2>&1 \
  || { stage "build FAILED (see build.log)"; tail -30 "$OUT/build.log"; exit 1; }

status=0
stage "[gpu] tests: CUDA vs CPU reference, scheduling invariance on the GPU"
timeout 240 "$BUILD/tests/hearth_exec_tests" "[gpu]" --durations yes > "$OUT/gpu_tests.txt" 2>&1
rc=$?; tail -3 "$OUT/gpu_tests.txt" | tee -a "$SUMMARY"
grep -q "SKIPPED" "$OUT/gpu_tests.txt" && { stage "gpu tests SKIPPED: no usable GPU"; status=1; }
[ $rc -ne 0 ] && { stage "gpu tests FAILED rc=$rc"; status=1; }

stage "decode paged-attention bandwidth"
timeout 120 "$BUILD/bench/gpu/hearth_gpu_decode_attention" --out="$OUT/decode_attention.csv" \
  > "$OUT/decode_attention.txt" 2>&1
rc=$?; cat "$OUT/decode_attention.txt" >> "$SUMMARY"; report "bandwidth" $rc

stage "step-cost calibration"
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z ' 'a-z_' | tr -cd 'a-z0-9_')
PROFILE=$OUT/${GPU_NAME:-gpu}_llama8b.toml
CAL_FLAGS=""; [ "$QUICK" = "--quick" ] && CAL_FLAGS="--quick"
timeout 240 "$BUILD/bench/gpu/hearth_gpu_calibrate" --profile="$PROFILE" \
  --points="$OUT/calibration_points.csv" $CAL_FLAGS > "$OUT/calibration.txt" 2>&1
rc=$?; grep -E "error|compositions|c0=|SKIPPED" "$OUT/calibration.txt" | tee -a "$SUMMARY"
report "calibration" $rc

if command -v gnuplot > /dev/null && [ -s "$OUT/decode_attention.csv" ]; then
  stage "figures"
  gnuplot -e "out='$OUT/decode_attention.svg'; data='$OUT/decode_attention.csv'" \
    "$ROOT/bench/gpu/decode_attention.gp" >> "$SUMMARY" 2>&1 || true
  [ -s "$OUT/calibration_points.csv" ] && gnuplot -e "out='$OUT/calibration.svg'; data='$OUT/calibration_points.csv'; profile='$PROFILE'" \
    "$ROOT/bench/gpu/calibration.gp" >> "$SUMMARY" 2>&1 || true
fi
stage "done (status $status)"
exit $status

#!/usr/bin/env bash
# One-shot GPU check for issues 5 and 16, finishing in under 8 minutes on one
# GPU (every stage's timeout is cut to what is left of a 470 s budget): builds
# Hearth with CUDA for the local GPU only, runs the [gpu] tests (CUDA float32
# vs the CPU reference, bfloat16 tolerance, scheduling invariance on the GPU,
# malformed plans, the 8B shape), the decode paged-attention bandwidth
# benchmark, the step-cost calibration, and the fidelity replay (the same
# request list on the CUDA executor and in the simulator with the profile
# just fitted, as bench/fidelity does for llama.cpp), and writes every figure
# to $OUT_DIR (default bench/gpu/results):
#   gpu_tests.txt            test log
#   decode_attention.csv/.txt bandwidth table (fraction of copy bandwidth)
#   calibration_points.csv   every timed step composition
#   <gpu>_llama8b.toml       the fitted profile for the simulator
#   calibration.txt          fit and held-out error
#   replay.txt, replay/      per-step, TTFT and E2E errors; policy order; CSVs
#   *.svg                    figures, when gnuplot is installed
#   summary.txt              timings of each stage
# Without an NVIDIA GPU (nvidia-smi missing or listing none) it says "no GPU"
# and exits 0 having built nothing. NVIDIA_SMI overrides the probe (the CPU
# test of that path points it at a missing file).
# Usage: bench/gpu/run_gpu_checks.sh [--quick]
set -uo pipefail
T0=$(date +%s)
BUDGET_S=${BUDGET_S:-470}
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
# A stage's timeout: its own cap, or what is left of the budget if less.
cap() {
  local left=$(( BUDGET_S - ($(date +%s) - T0) ))
  [ "$left" -lt "$1" ] && echo $(( left > 1 ? left : 1 )) || echo "$1"
}

NVIDIA_SMI=${NVIDIA_SMI:-nvidia-smi}
GPUS=$("$NVIDIA_SMI" -L 2>/dev/null || true)
if [ -z "$GPUS" ]; then
  stage "no GPU: '$NVIDIA_SMI -L' lists no NVIDIA GPU here; nothing built or measured. Run this on a machine with a GPU and CUDA (bench/fidelity/run_fidelity.sh is the CPU llama.cpp version)."
  exit 0
fi
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
timeout "$(cap 300)" cmake --build "$BUILD" -j"$(nproc)" --target hearth_exec_tests \
  hearth_gpu_decode_attention hearth_gpu_calibrate hearth_gpu_replay > "$OUT/build.log" 2>&1 \
  || { stage "build FAILED (see build.log)"; tail -30 "$OUT/build.log"; exit 1; }

status=0
stage "[gpu] tests: CUDA vs CPU reference, scheduling invariance on the GPU"
timeout "$(cap 150)" "$BUILD/tests/hearth_exec_tests" "[gpu]" --durations yes > "$OUT/gpu_tests.txt" 2>&1
rc=$?; tail -3 "$OUT/gpu_tests.txt" | tee -a "$SUMMARY"
grep -q "SKIPPED" "$OUT/gpu_tests.txt" && { stage "gpu tests SKIPPED: no usable GPU"; status=1; }
[ $rc -ne 0 ] && { stage "gpu tests FAILED rc=$rc"; status=1; }

stage "decode paged-attention bandwidth"
timeout "$(cap 60)" "$BUILD/bench/gpu/hearth_gpu_decode_attention" --out="$OUT/decode_attention.csv" \
  > "$OUT/decode_attention.txt" 2>&1
rc=$?; cat "$OUT/decode_attention.txt" >> "$SUMMARY"; report "bandwidth" $rc

stage "step-cost calibration"
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z ' 'a-z_' | tr -cd 'a-z0-9_')
PROFILE=$OUT/${GPU_NAME:-gpu}_llama8b.toml
CAL_FLAGS=""; [ "$QUICK" = "--quick" ] && CAL_FLAGS="--quick"
timeout "$(cap 150)" "$BUILD/bench/gpu/hearth_gpu_calibrate" --profile="$PROFILE" \
  --points="$OUT/calibration_points.csv" $CAL_FLAGS > "$OUT/calibration.txt" 2>&1
rc=$?; grep -E "error|compositions|c0=|SKIPPED" "$OUT/calibration.txt" | tee -a "$SUMMARY"
report "calibration" $rc

stage "fidelity replay: the CUDA executor against the simulator with that profile"
if [ -s "$PROFILE" ]; then
  mkdir -p "$OUT/replay"
  timeout "$(cap 150)" "$BUILD/bench/gpu/hearth_gpu_replay" --profile="$PROFILE" \
    --out_dir="$OUT/replay" > "$OUT/replay.txt" 2>&1
  rc=$?; grep -E "^policy|request|step time|voice" "$OUT/replay.txt" | tee -a "$SUMMARY"
  report "replay" $rc
else
  stage "replay SKIPPED: no profile (calibration failed)"; status=1
fi

if command -v gnuplot > /dev/null && [ -s "$OUT/decode_attention.csv" ]; then
  stage "figures"
  gnuplot -e "out='$OUT/decode_attention.svg'; data='$OUT/decode_attention.csv'" \
    "$ROOT/bench/gpu/decode_attention.gp" >> "$SUMMARY" 2>&1 || true
  [ -s "$OUT/calibration_points.csv" ] && gnuplot -e "out='$OUT/calibration.svg'; data='$OUT/calibration_points.csv'; profile='$PROFILE'" \
    "$ROOT/bench/gpu/calibration.gp" >> "$SUMMARY" 2>&1 || true
  [ -s "$OUT/replay/requests_household.csv" ] && gnuplot -e "dir='$OUT/replay'" \
    "$ROOT/bench/fidelity/replay.gp" >> "$SUMMARY" 2>&1 || true
fi
stage "done (status $status)"
exit $status

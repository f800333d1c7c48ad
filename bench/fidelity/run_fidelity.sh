#!/usr/bin/env bash
# The simulator-fidelity check (issue 16) on llama.cpp, end to end, on the
# CPU: builds the two programs (Release), calibrates the fitted step-cost
# profile on the self-written tiny and wide models, then replays one request
# list on llama.cpp and in the simulator under FIFO and the household policy.
# Writes to $OUT_DIR (default bench/fidelity/results):
#   <model>_profile.toml         the fitted profile (simulator format)
#   <model>_points.csv           every composition: median, p10, p90, prediction
#   calibration_<model>.txt      table, fit, held-out error, timing spread
#   replay_<model>.txt           step / TTFT / E2E errors, policy order
#   replay_<model>/              per-request and per-step CSVs, the request
#                                list as JSONL, replay.svg (with gnuplot)
# Timings, so run it on a quiet machine if you can; on a shared one, read the
# spread lines. About 10 minutes on one free core. Usage:
#   bench/fidelity/run_fidelity.sh            # ROUNDS=6 REPS=3 by default
#   ROUNDS=2 bench/fidelity/run_fidelity.sh   # a quicker, noisier run
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build-rel}
OUT=${OUT_DIR:-$ROOT/bench/fidelity/results}
ROUNDS=${ROUNDS:-6}
REPS=${REPS:-3}
# A "-noflash" suffix turns llama.cpp's flash attention off for that run.
MODELS=${MODELS:-"tiny wide tiny-noflash"}
REPLAY_MODELS=${REPLAY_MODELS:-"wide"}
mkdir -p "$OUT"
T0=$(date +%s)
stage() { echo "[$(( $(date +%s) - T0 ))s] $*"; }

if [ ! -d "$ROOT/.deps/llama_cpp" ]; then
  echo "llama.cpp is not installed; run examples/llama_cpp/install_llama_cpp.sh first" >&2
  exit 1
fi
stage "configure and build (Release) in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DHEARTH_BUILD_BENCH=ON > "$OUT/configure.log"
cmake --build "$BUILD" -j"$(nproc)" --target hearth_fidelity_calibrate hearth_fidelity_replay \
  > "$OUT/build.log"
BIN=$BUILD/bench/fidelity

for run in $MODELS; do
  model=${run%-noflash}
  flash=true; [ "$run" != "$model" ] && flash=false
  stage "calibrate $run ($ROUNDS rounds x $REPS reps)"
  "$BIN/hearth_fidelity_calibrate" --model="$model" --flash_attn=$flash --rounds="$ROUNDS" \
    --reps="$REPS" --profile="$OUT/${run}_profile.toml" --points="$OUT/${run}_points.csv" \
    > "$OUT/calibration_$run.txt" 2> "$OUT/calibration_$run.log"
  grep -E "^c0=|^base_by_tokens|^fit error|^held-out|^timing spread" "$OUT/calibration_$run.txt"
done

for run in $REPLAY_MODELS; do
  model=${run%-noflash}
  flash=true; [ "$run" != "$model" ] && flash=false
  stage "replay on $run: real llama.cpp, then the simulator"
  mkdir -p "$OUT/replay_$run"
  "$BIN/hearth_fidelity_replay" --model="$model" --flash_attn=$flash \
    --profile="$OUT/${run}_profile.toml" \
    --out_dir="$OUT/replay_$run" > "$OUT/replay_$run.txt"
  cat "$OUT/replay_$run.txt"
  if command -v gnuplot > /dev/null; then
    gnuplot -e "dir='$OUT/replay_$run'" "$ROOT/bench/fidelity/replay.gp" || true
  fi
done
stage "done; figures in $OUT"

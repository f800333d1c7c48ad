#!/usr/bin/env bash
# The simulator-fidelity check (issue 16) on llama.cpp, end to end, on the
# CPU: builds the two programs (Release), calibrates the fitted step-cost
# profile on the self-written tiny and wide models, then replays one request
# list on llama.cpp and in the simulator under FIFO and the household policy,
# REPEATS real runs per policy at each of LOADS.
# Writes to $OUT_DIR (default bench/fidelity/results):
#   <model>_profile.toml         the fitted profile (simulator format)
#   <model>_points.csv           every composition: median, p10, p90, prediction
#   calibration_<model>.txt      table, fit, held-out error, timing spread
#   replay_<model>_load<L>.txt   step / TTFT / E2E errors per run, a summary,
#                                the policy order judged over the runs
#   replay_<model>_load<L>/      per-request and per-step CSVs of the first
#                                run (later runs' in run<k>/), the request
#                                list as JSONL, replay.svg (with gnuplot)
# Each .txt ends with the machine's load average before and after: timings,
# so run it on a quiet machine if you can; on a shared one, read the spread
# lines. About 17 minutes on one free core. Usage:
#   bench/fidelity/run_fidelity.sh            # ROUNDS=6 REPS=3 REPEATS=3 LOADS="0.75 1 1.5"
#   ROUNDS=2 REPEATS=2 bench/fidelity/run_fidelity.sh   # quicker, noisier
#   MODELS=wide REPLAY_MODELS=wide bench/fidelity/run_fidelity.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build-rel}
OUT=${OUT_DIR:-$ROOT/bench/fidelity/results}
ROUNDS=${ROUNDS:-6}
REPS=${REPS:-3}
# A "-noflash" suffix turns llama.cpp's flash attention off for that run.
MODELS=${MODELS:-"tiny wide tiny-noflash"}
REPLAY_MODELS=${REPLAY_MODELS:-"wide"}
REPEATS=${REPEATS:-3}
LOADS=${LOADS:-"0.75 1 1.5"}
mkdir -p "$OUT"
T0=$(date +%s)
stage() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

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
  before=$(loadavg)
  "$BIN/hearth_fidelity_calibrate" --model="$model" --flash_attn=$flash --rounds="$ROUNDS" \
    --reps="$REPS" --profile="$OUT/${run}_profile.toml" --points="$OUT/${run}_points.csv" \
    > "$OUT/calibration_$run.txt" 2> "$OUT/calibration_$run.log"
  echo "load average (1, 5, 15 min) before: $before; after: $(loadavg); $(nproc) cores" \
    >> "$OUT/calibration_$run.txt"
  grep -E "^c0=|^base_by_tokens|^fit error|^held-out|^timing spread" "$OUT/calibration_$run.txt"
done

for run in $REPLAY_MODELS; do
  model=${run%-noflash}
  flash=true; [ "$run" != "$model" ] && flash=false
  for load in $LOADS; do
    name=replay_${run}_load$load
    stage "replay on $run at load $load, $REPEATS runs per policy: real llama.cpp, then the simulator"
    mkdir -p "$OUT/$name"
    before=$(loadavg)
    "$BIN/hearth_fidelity_replay" --model="$model" --flash_attn=$flash --load="$load" \
      --repeats="$REPEATS" --profile="$OUT/${run}_profile.toml" \
      --out_dir="$OUT/$name" > "$OUT/$name.txt"
    echo "load average (1, 5, 15 min) before: $before; after: $(loadavg); $(nproc) cores" \
      >> "$OUT/$name.txt"
    sed -n '/^policy  *run/,$p' "$OUT/$name.txt"
    if command -v gnuplot > /dev/null; then
      gnuplot -e "dir='$OUT/$name'" "$ROOT/bench/fidelity/replay.gp" || true
    fi
  done
done
stage "done; figures in $OUT"

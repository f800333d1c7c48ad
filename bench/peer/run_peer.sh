#!/usr/bin/env bash
# The peer benchmark (issue 29): one household's load against llama-server and hearth-serve
# on the same self-written model, and the table of ratios in bench/RESULTS.md, section
# "Peer: hearth-serve vs llama-server". Not part of the test command: a full run takes
# about an hour on the 2-core development VM.
#
# Needs, built beforehand (this script compiles nothing):
#   hearth-serve and hearth_llama_overhead (the model writer) in --build-dir:
#     cmake -S . -B build-peer -G Ninja -DCMAKE_BUILD_TYPE=Release \
#           -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DHEARTH_BUILD_BENCH=OFF -DHEARTH_BUILD_TESTS=OFF
#     cmake --build build-peer -j2 --target hearth-serve hearth_llama_overhead
#   llama-server: bench/peer/build_llama_server.sh
#
# What runs: bench/peer/peer_load.py (its docstring has the load and the definitions).
# --quick is a smoke check (fewer requests, one run) and writes nothing to RESULTS.md.
#
# Usage: bench/peer/run_peer.sh [--runs N] [--quick] [--servers LIST] [--out DIR]
#                               [--build-dir DIR] [--no-results]
#   --runs N         runs of every server and scenario (default 3)
#   --quick          smoke check: 8 documents, 6 voice, 4 chats, 1 run, no RESULTS.md
#   --servers LIST   comma-separated subset of llama,llama_kvu,household,fifo (default all)
#   --out DIR        per-request records, logs, the section (default <build-dir>/peer-results)
#   --build-dir DIR  Hearth build with hearth-serve (default <repo>/build-peer)
#   --no-results     print the table; leave bench/RESULTS.md alone
# Environment: HEARTH_PEER_LLAMA_DIR as for build_llama_server.sh.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${script_dir}/../.." && pwd)"
llama_dir="${HEARTH_PEER_LLAMA_DIR:-${repo_root}/build-peer-llama}"
backend_dir="${HEARTH_LLAMA_CPP_DIR:-${repo_root}/.deps/llama_cpp}/lib"

log() { echo "run_peer: $*" >&2; }
die() { log "error: $*"; exit 1; }
usage() {
  sed -n '/^# Usage:/,/^# Environment:/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

runs=3 quick=0 servers="llama,llama_kvu,household,fifo" out="" build_dir="" write=1
original_args=("$@")
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) [[ $# -ge 2 ]] || usage; runs="$2"; shift 2 ;;
    --runs=*) runs="${1#*=}"; shift ;;
    --quick) quick=1; shift ;;
    --servers) [[ $# -ge 2 ]] || usage; servers="$2"; shift 2 ;;
    --servers=*) servers="${1#*=}"; shift ;;
    --out) [[ $# -ge 2 ]] || usage; out="$2"; shift 2 ;;
    --out=*) out="${1#*=}"; shift ;;
    --build-dir) [[ $# -ge 2 ]] || usage; build_dir="$2"; shift 2 ;;
    --build-dir=*) build_dir="${1#*=}"; shift ;;
    --no-results) write=0; shift ;;
    -h|--help) usage ;;
    *) log "unknown argument '$1'"; usage ;;
  esac
done
[[ "${runs}" =~ ^[1-9][0-9]?$ && "${runs}" -le 20 ]] || die "--runs is '${runs}'; must be an integer in [1, 20]"
IFS=',' read -r -a server_list <<< "${servers}"
[[ ${#server_list[@]} -gt 0 ]] || die "--servers is empty; pick from llama,llama_kvu,household,fifo"
for s in "${server_list[@]}"; do
  case "${s}" in
    llama|llama_kvu|household|fifo) ;;
    *) die "--servers names '${s}'; each must be one of llama,llama_kvu,household,fifo" ;;
  esac
done
if [[ ${quick} -eq 1 ]]; then
  runs=1
  write=0
fi
build_dir="${build_dir:-${repo_root}/build-peer}"
out="${out:-${build_dir}/peer-results}"

hearth_serve="${build_dir}/examples/serve/hearth-serve"
writer="${build_dir}/examples/llama_cpp/hearth_llama_overhead"
llama_server="${llama_dir}/build/bin/llama-server"
for f in "${hearth_serve}" "${writer}"; do
  [[ -x "${f}" ]] || die "${f} not built (see the build commands at the top of ${BASH_SOURCE[0]})"
done
[[ -x "${llama_server}" && -d "${llama_dir}/lib-prebuilt" ]] ||
  die "${llama_server} not built: run bench/peer/build_llama_server.sh"
ls "${backend_dir}"/libggml-cpu-*.so >/dev/null 2>&1 ||
  die "no CPU backends in ${backend_dir}: run examples/llama_cpp/install_llama_cpp.sh"
command -v python3 >/dev/null || die "needs python3"

mkdir -p "${out}"
model="${out}/peer.gguf"
# The writer is the overhead program's: it writes the model, then times one step (a moment).
# At width >= 256 it gives the model 8 heads (4 KV); it drops BOS/EOS from the output rows.
"${writer}" --n_layer=4 --n_embd=256 --n_ff=128 --tiny_path="${model}" --sequences=1 \
  --steps=1 --prompt=4 --threads=1 > "${out}/writer.log" 2>&1 ||
  { cat "${out}/writer.log" >&2; die "writing the model failed"; }

commit="$(git -C "${repo_root}" rev-parse --short HEAD)"
git -C "${repo_root}" diff --quiet HEAD -- . 2>/dev/null || commit="${commit} (with uncommitted changes)"
command_line="bench/peer/run_peer.sh${original_args[*]:+ ${original_args[*]}}"
results_args=()
[[ ${write} -eq 1 ]] && results_args=(--results-md "${repo_root}/bench/RESULTS.md")

log "servers ${servers}, ${runs} run(s); records and logs in ${out}"
python3 "${script_dir}/peer_load.py" --hearth-serve "${hearth_serve}" \
  --llama-server "${llama_server}" --llama-lib "${llama_dir}/lib-prebuilt" \
  --backend-dir "${backend_dir}" --model "${model}" --out "${out}" --runs "${runs}" \
  --servers "${servers}" $([[ ${quick} -eq 1 ]] && echo --quick) \
  --model-desc "4 layers, width 256, feed-forward 128, 8 heads (4 KV), f32, seed 1" \
  --command "${command_line}" --commit "${commit}" "${results_args[@]}"

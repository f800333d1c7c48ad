#!/usr/bin/env bash
# Builds llama-server, the peer that bench/peer/run_peer.sh measures hearth-serve against,
# from the llama.cpp source that the pinned npm package ships, offline.
#
# The source: node-llama-cpp (the version examples/llama_cpp/install_llama_cpp.sh pins)
# carries llama.cpp's whole tree as a git bundle, package/llama/gitRelease.bundle, and
# builds its prebuilt libraries (.deps/llama_cpp/lib) from that same tree. The tarball is
# taken from npm's cache (the installer's `npm pack` put it there) or from --bundle; the
# network is never used, and the tarball must match the installer's pinned sha256.
#
# The build: ggml is not compiled. A CMake package shim points llama.cpp's
# LLAMA_USE_SYSTEM_GGML at the prebuilt libggml and libggml-base, so llama-server runs on
# the same ggml, and the same CPU backend variant (loaded at run time from that folder),
# as hearth-serve. libllama is compiled, since llama-server's link needs the target, but
# run_peer.sh runs llama-server on the prebuilt libllama (see lib-prebuilt/ below), so
# both servers execute the same llama.cpp machine code. Only the llama-server target and
# what it links are built; no web UI (an empty asset table, nothing downloaded).
#
# Result (default <repo>/build-peer-llama, ignored by git's /build*/ rule):
#   build/bin/llama-server the program (its RUNPATH finds the source-built libllama)
#   lib-prebuilt/          libllama.so.0 -> the prebuilt libllama; run_peer.sh puts this
#                          folder on LD_LIBRARY_PATH, which the loader searches first
#   STAMP                  package version, llama.cpp release, bundle commit
#
# Idempotent: with the stamp present and the program built, a second run only checks.
#
# Usage: bench/peer/build_llama_server.sh [--bundle PATH] [--jobs N] [--force]
#   --bundle PATH  node-llama-cpp-<version>.tgz, or the gitRelease.bundle taken out of it
#   --jobs N       parallel compile jobs (default 2: the development VM has two cores)
#   --force        rebuild from a fresh copy of the source
# Environment: HEARTH_PEER_LLAMA_DIR overrides the build folder.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${script_dir}/../.." && pwd)"
installer="${repo_root}/examples/llama_cpp/install_llama_cpp.sh"
out="${HEARTH_PEER_LLAMA_DIR:-${repo_root}/build-peer-llama}"
deps_lib="${HEARTH_LLAMA_CPP_DIR:-${repo_root}/.deps/llama_cpp}/lib"

log() { echo "build_llama_server: $*" >&2; }
die() { log "error: $*"; exit 1; }
usage() {
  sed -n '/^# Usage:/,/^# Environment:/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

bundle_arg="" jobs=2 force=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bundle) [[ $# -ge 2 ]] || usage; bundle_arg="$2"; shift 2 ;;
    --bundle=*) bundle_arg="${1#*=}"; shift ;;
    --jobs) [[ $# -ge 2 ]] || usage; jobs="$2"; shift 2 ;;
    --jobs=*) jobs="${1#*=}"; shift ;;
    --force) force=1; shift ;;
    -h|--help) usage ;;
    *) log "unknown argument '$1'"; usage ;;
  esac
done
[[ "${jobs}" =~ ^[1-9][0-9]?$ ]] || die "--jobs is '${jobs}'; must be an integer in [1, 99]"

# One pin: the version and checksum the installer uses, read from it.
[[ -f "${installer}" ]] || die "${installer} not found (is this a Hearth checkout?)"
pin() { sed -n "s/^readonly $1=\"\(.*\)\"$/\1/p" "${installer}"; }
version="$(pin VERSION)"
release="$(pin LLAMA_RELEASE)"
tgz_sha256="$(pin HEADER_SHA256)"
[[ -n "${version}" && -n "${release}" && -n "${tgz_sha256}" ]] ||
  die "could not read VERSION, LLAMA_RELEASE and HEADER_SHA256 from ${installer}"

for f in libllama."${release}".so libggml."${release}".so libggml-base.so; do
  [[ -f "${deps_lib}/${f}" ]] ||
    die "${deps_lib}/${f} missing: run examples/llama_cpp/install_llama_cpp.sh first"
done
for tool in git cmake tar sha256sum c++; do
  command -v "${tool}" >/dev/null || die "needs ${tool}"
done
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

if [[ ${force} -eq 0 && -x "${out}/build/bin/llama-server" && -f "${out}/STAMP" ]] &&
   grep -q "^node-llama-cpp ${version} llama.cpp ${release} " "${out}/STAMP"; then
  log "llama-server already built in ${out} ($(cat "${out}/STAMP"))"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# Finds the bundle: --bundle (a tarball or the bundle itself), else the tarball in npm's
# cache. `npm pack --offline` fails rather than download.
bundle=""
tgz=""
if [[ -n "${bundle_arg}" ]]; then
  [[ -f "${bundle_arg}" ]] || die "--bundle ${bundle_arg}: no such file"
  case "${bundle_arg}" in
    *.tgz|*.tar.gz) tgz="${bundle_arg}" ;;
    *) bundle="${bundle_arg}" ;;
  esac
elif command -v npm >/dev/null &&
     (cd "${work}" && npm pack --offline --ignore-scripts --silent "node-llama-cpp@${version}" \
        >/dev/null 2>&1); then
  tgz="${work}/node-llama-cpp-${version}.tgz"
else
  die "the llama.cpp source bundle is absent: node-llama-cpp@${version} is not in npm's" \
      "cache. Run examples/llama_cpp/install_llama_cpp.sh (it fills the cache), or run" \
      "'npm pack node-llama-cpp@${version}' where the registry is reachable and pass" \
      "--bundle <that .tgz>"
fi
if [[ -n "${tgz}" ]]; then
  echo "${tgz_sha256}  ${tgz}" | sha256sum --check --quiet ||
    die "${tgz} does not match the pinned sha256 (${tgz_sha256})"
  tar -xzf "${tgz}" -C "${work}" package/llama/gitRelease.bundle \
      package/llama/binariesGithubRelease.json ||
    die "${tgz} holds no package/llama/gitRelease.bundle"
  grep -q "\"release\": *\"${release}\"" "${work}/package/llama/binariesGithubRelease.json" ||
    die "${tgz}'s bundle is not llama.cpp ${release}"
  bundle="${work}/package/llama/gitRelease.bundle"
fi

git -C "${work}" init -q --bare src.git
git -C "${work}/src.git" fetch -q "${bundle}" HEAD:refs/heads/release ||
  die "${bundle} is not a readable git bundle"
commit="$(git -C "${work}/src.git" rev-parse --short=12 release)"

src="${out}/src"
if [[ ${force} -eq 1 || ! -f "${src}/.commit" || "$(cat "${src}/.commit" 2>/dev/null)" != "${commit}" ]]; then
  log "unpacking llama.cpp ${release} (bundle commit ${commit}) into ${src}"
  rm -rf "${src}" "${out}/build"
  mkdir -p "${src}"
  git -C "${work}/src.git" archive release | tar -x -C "${src}"
  echo "${commit}" > "${src}/.commit"
fi

# The package shim: what llama.cpp's find_package(ggml) needs, the two prebuilt libraries.
shim="${out}/ggml-shim"
mkdir -p "${shim}"
cat > "${shim}/ggml-config.cmake" <<EOF
# Written by bench/peer/build_llama_server.sh: the prebuilt ggml of ${deps_lib}.
set(GGML_SHARED_LIB ON)
set(GGML_BACKEND_DL ON)
if(NOT TARGET ggml::ggml)
  add_library(ggml::ggml-base SHARED IMPORTED)
  set_target_properties(ggml::ggml-base PROPERTIES
    IMPORTED_LOCATION "${deps_lib}/libggml-base.so"
    INTERFACE_INCLUDE_DIRECTORIES "${src}/ggml/include")
  add_library(ggml::ggml SHARED IMPORTED)
  set_target_properties(ggml::ggml PROPERTIES
    IMPORTED_LOCATION "${deps_lib}/libggml.${release}.so"
    INTERFACE_INCLUDE_DIRECTORIES "${src}/ggml/include"
    INTERFACE_LINK_LIBRARIES ggml::ggml-base)
endif()
EOF

log "configuring (log: ${out}/configure.log)"
cmake -S "${src}" -B "${out}/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=ON -DLLAMA_USE_SYSTEM_GGML=ON -Dggml_DIR="${shim}" \
  -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_NUMBER=0 -DLLAMA_BUILD_COMMIT="${commit}" \
  > "${out}/configure.log" 2>&1 || { tail -30 "${out}/configure.log" >&2; die "configure failed"; }

log "building llama-server with ${jobs} jobs (log: ${out}/build.log)"
cmake --build "${out}/build" -j"${jobs}" --target llama-server > "${out}/build.log" 2>&1 ||
  { tail -30 "${out}/build.log" >&2; die "build failed"; }

# The prebuilt libllama under the name llama-server's libraries were linked against.
soname="$(objdump -p "${out}/build/bin/libllama.so" | awk '$1 == "SONAME" {print $2}')"
[[ -n "${soname}" ]] || die "${out}/build/bin/libllama.so has no SONAME (objdump -p)"
mkdir -p "${out}/lib-prebuilt"
ln -sfn "${deps_lib}/libllama.${release}.so" "${out}/lib-prebuilt/${soname}"

echo "node-llama-cpp ${version} llama.cpp ${release} bundle ${commit}" > "${out}/STAMP"
log "built ${out}/build/bin/llama-server ($(cat "${out}/STAMP"))"

#!/usr/bin/env bash
# Installs a prebuilt llama.cpp (CPU) for Hearth's llama.cpp example and tests.
#
# Nothing is compiled and nothing is committed: the shared libraries come from
# the npm package @node-llama-cpp/linux-x64 and the matching public headers
# (include/llama.h, ggml/include/*.h) are read out of the git bundle shipped in
# node-llama-cpp of the same version. Both are pinned to one version, so the
# headers always describe the libraries they sit next to.
#
# Result (default: <repo>/.deps/llama_cpp, which git ignores):
#   include/   llama.h, llama-cpp.h, ggml*.h, gguf.h
#   lib/       libllama, libggml, libggml-base and the CPU backends
#              (libggml-cpu-*.so, loaded at run time from this folder)
#   schema/    llama.cpp's JSON-schema-to-grammar converter, as sources from
#              the same tree (common/json-schema-to-grammar.cpp and what it
#              includes, vendor/nlohmann): the prebuilt libraries do not
#              carry it, so hearth-serve compiles it
#              (examples/serve/cmake/HearthJsonSchema.cmake)
#   VERSION    the pinned package version and llama.cpp release
#
# Idempotent: a second run with the same version finds the stamp and does
# nothing. Override the destination with HEARTH_LLAMA_CPP_DIR. On a fresh
# Debian 12 without node/npm/git, running as root installs them with apt-get.
# No package install scripts are run (npm pack only downloads tarballs).
#
# Usage: examples/llama_cpp/install_llama_cpp.sh [--force]
set -euo pipefail

readonly VERSION="3.22.1"
readonly LLAMA_RELEASE="v0.5.0"
readonly LIB_PACKAGE="@node-llama-cpp/linux-x64@${VERSION}"
readonly HEADER_PACKAGE="node-llama-cpp@${VERSION}"
# sha256 of the two tarballs at this version; a registry answer that differs
# is refused rather than installed.
readonly LIB_SHA256="0d953e1503d5ab4608d8ed5b739132308c81ac05ffeb760d2a7f30e08a9f90e0"
readonly HEADER_SHA256="a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f"
# The converter and the files it includes (its common.h, of which it uses
# three string helpers, stays out: examples/serve/json_schema/common.h).
readonly SCHEMA_SOURCES=(
  common/json-schema-to-grammar.h common/json-schema-to-grammar.cpp
  common/json-schema.h common/json-schema.cpp common/json.h common/json.cpp
  common/trie.h common/trie.cpp common/unicode.h common/unicode.cpp
  vendor/nlohmann/json.hpp vendor/nlohmann/json_fwd.hpp licenses/LICENSE-jsonhpp
)

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${script_dir}/../.." && pwd)"
dest="${HEARTH_LLAMA_CPP_DIR:-${repo_root}/.deps/llama_cpp}"
stamp="${dest}/VERSION"
force=0
[[ "${1:-}" == "--force" ]] && force=1

log() { echo "install_llama_cpp: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Two set-ups running at once (parallel CI jobs) take turns.
mkdir -p "$(dirname "${dest}")"
if command -v flock >/dev/null; then
  exec 9>"${dest}.lock"
  flock 9
fi

# An install from before schema/ existed is redone.
if [[ ${force} -eq 0 && -f "${stamp}" && -f "${dest}/schema/common/json-schema-to-grammar.cpp" ]] &&
   grep -qx "node-llama-cpp ${VERSION} llama.cpp ${LLAMA_RELEASE}" "${stamp}"; then
  log "llama.cpp ${LLAMA_RELEASE} (npm ${VERSION}) already in ${dest}"
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) # Not an error: the llama.cpp example and tests are then skipped.
     log "skipped: the pinned prebuilt packages are for Linux x86_64, this is" \
         "$(uname -s)-$(uname -m); build llama.cpp yourself and configure with" \
         "-DLLAMA_CPP_ROOT=<its install prefix>"
     exit 0 ;;
esac

# Tools: npm to fetch, git to read the header bundle, tar to unpack.
missing=()
command -v npm >/dev/null || missing+=(nodejs npm)
command -v git >/dev/null || missing+=(git)
command -v tar >/dev/null || missing+=(tar)
command -v sha256sum >/dev/null || missing+=(coreutils)
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    log "installing ${missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    die "needs ${missing[*]} (install them, or run as root on Debian to let this script do it)"
  fi
fi

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

log "fetching ${LIB_PACKAGE} and ${HEADER_PACKAGE}"
(cd "${work}" && npm pack --ignore-scripts --silent "${LIB_PACKAGE}" "${HEADER_PACKAGE}" >/dev/null) ||
  die "npm pack failed (is the npm registry reachable?)"
lib_tgz="${work}/node-llama-cpp-linux-x64-${VERSION}.tgz"
header_tgz="${work}/node-llama-cpp-${VERSION}.tgz"
echo "${LIB_SHA256}  ${lib_tgz}
${HEADER_SHA256}  ${header_tgz}" | sha256sum --check --quiet ||
  die "downloaded tarballs do not match the pinned sha256 sums"

mkdir -p "${work}/libpkg" "${work}/hdrpkg"
tar -xzf "${lib_tgz}" -C "${work}/libpkg"
# From the header package only the bundle is needed.
tar -xzf "${header_tgz}" -C "${work}/hdrpkg" package/llama/gitRelease.bundle

bins="${work}/libpkg/package/bins/linux-x64"
[[ -f "${bins}/libllama.${LLAMA_RELEASE}.so" ]] ||
  die "unexpected package layout: ${bins}/libllama.${LLAMA_RELEASE}.so missing"

# The bundle holds the whole llama.cpp tree at the release; take the headers.
git init -q --bare "${work}/src.git"
git -C "${work}/src.git" fetch -q "${work}/hdrpkg/package/llama/gitRelease.bundle" HEAD:refs/heads/release
mkdir -p "${work}/tree"
git -C "${work}/src.git" archive release include ggml/include | tar -x -C "${work}/tree"

stage="${dest}.partial"
rm -rf "${stage}"
mkdir -p "${stage}/include" "${stage}/lib" "${stage}/schema"
cp "${work}/tree/include/"*.h "${work}/tree/ggml/include/"*.h "${stage}/include/"
git -C "${work}/src.git" archive release "${SCHEMA_SOURCES[@]}" | tar -x -C "${stage}/schema" ||
  die "the bundle lacks llama.cpp's schema converter sources (${SCHEMA_SOURCES[*]})"
cp "${bins}/libllama.${LLAMA_RELEASE}.so" "${bins}/libggml.${LLAMA_RELEASE}.so" \
   "${bins}/libggml-base.so" "${bins}"/libggml-cpu-*.so "${stage}/lib/"
cp "${work}/libpkg/package/LICENSE" "${stage}/LICENSE.node-llama-cpp"
git -C "${work}/src.git" show release:LICENSE > "${stage}/LICENSE.llama.cpp"
echo "node-llama-cpp ${VERSION} llama.cpp ${LLAMA_RELEASE}" > "${stage}/VERSION"

rm -rf "${dest}"
mv "${stage}" "${dest}"
log "installed llama.cpp ${LLAMA_RELEASE} (npm ${VERSION}) into ${dest}"

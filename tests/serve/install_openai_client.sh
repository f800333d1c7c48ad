#!/usr/bin/env bash
# Installs the official `openai` npm client, pinned, for hearth-serve's
# openai_client test (tests/serve/openai_client_test.py): the test drives the
# server with the client real applications use, so that its error classes,
# stream parser and retries meet hearth-serve's answers, not our own
# reading of the API reference.
#
# Nothing is committed and no install script runs: `npm pack` downloads the
# one tarball (the package has no dependencies at this version), its sha256
# is checked against the pin, and it is unpacked into the git-ignored
# .deps/openai_node (override with HEARTH_OPENAI_NODE_DIR):
#   package/   the package as published (require() this folder)
#   VERSION    the pinned version
#
# 6.x, not the newer 7.x: 7.x declares node >= 22, and Debian 12's nodejs
# (what cmake/scripts/setup_debian.sh installs) is 18.
#
# Idempotent: a second run with the same version finds the stamp and does
# nothing. Usage: tests/serve/install_openai_client.sh [--force]
set -euo pipefail

readonly VERSION="6.49.0"
readonly SHA256="e48de0f4c5dbecebdeb864233f5ea49be07cd3e0ff3bd3e1e6745dc5e168cced"

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${script_dir}/../.." && pwd)"
dest="${HEARTH_OPENAI_NODE_DIR:-${repo_root}/.deps/openai_node}"
stamp="${dest}/VERSION"
force=0
[[ "${1:-}" == "--force" ]] && force=1

log() { echo "install_openai_client: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Two set-ups running at once (parallel CI jobs) take turns.
mkdir -p "$(dirname "${dest}")"
if command -v flock >/dev/null; then
  exec 9>"${dest}.lock"
  flock 9
fi

if [[ ${force} -eq 0 && -f "${stamp}" ]] && grep -qx "openai ${VERSION}" "${stamp}"; then
  log "openai ${VERSION} already in ${dest}"
  exit 0
fi
command -v npm >/dev/null || die "needs npm (cmake/scripts/setup_debian.sh installs it)"

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
log "fetching openai@${VERSION}"
(cd "${work}" && npm pack --ignore-scripts --silent "openai@${VERSION}" >/dev/null) ||
  die "npm pack failed (is the npm registry reachable?)"
tgz="${work}/openai-${VERSION}.tgz"
echo "${SHA256}  ${tgz}" | sha256sum --check --quiet ||
  die "the downloaded tarball does not match the pinned sha256"

stage="${dest}.partial"
rm -rf "${stage}"
mkdir -p "${stage}"
tar -xzf "${tgz}" -C "${stage}"
[[ -f "${stage}/package/index.js" ]] || die "unexpected package layout: package/index.js missing"
echo "openai ${VERSION}" > "${stage}/VERSION"
rm -rf "${dest}"
mv "${stage}" "${dest}"
log "installed openai ${VERSION} into ${dest}"

#!/usr/bin/env bash
# Installs the Debian 12 packages Hearth needs, only those missing, by name.
# Downloads nothing else. Safe to run repeatedly.
set -euo pipefail

packages=(
  build-essential cmake git pkg-config
  libabsl-dev catch2 libbenchmark-dev
  libtomlplusplus-dev nlohmann-json3-dev gnuplot-nox python3
  python3-prometheus-client   # the metrics scrape test parses with its parser
  python3-numpy   # the Python package's plan columns as numpy arrays (src/python)
  clang libclang-rt-14-dev  # libFuzzer and its runtime, for the fuzz stage
  golang-go   # the C API's cgo consumer test (tests/capi/go); builds offline
  libcpp-httplib-dev   # hearth-serve's HTTP server (examples/serve)
  chromium   # hearth-serve's dashboard test loads the page headless (tests/serve)
)
# npm fetches the pinned llama.cpp packages and the openai client; a machine that already has a
# working node/npm (from any source) keeps it.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing missing Debian packages: ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

# llama.cpp for the real-engine example and tests: pinned prebuilt packages
# from the npm registry into the git-ignored .deps/ (skipped if present).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ -x "$root/examples/llama_cpp/install_llama_cpp.sh" ]]; then
  "$root/examples/llama_cpp/install_llama_cpp.sh"
fi
# The official openai npm client, pinned, for hearth-serve's client test.
"$root/tests/serve/install_openai_client.sh"

#!/usr/bin/env bash
# Consumers of an installed Hearth C API, one step per CTest test (see
# CMakeLists.txt here): consumers.sh <step>. The environment names the tools
# and trees (CMakeLists.txt sets it). Exit 77 means "skipped: tool missing".
set -euo pipefail
step=$1
prefix=$WORK/prefix
src=$HEARTH_SOURCE_DIR/tests/capi

skip_without() {  # <tool path> <name>
  if [[ -z "$1" || ! -x "$1" ]]; then
    echo "SKIP: $2 not found (cmake/scripts/setup_debian.sh installs it)"
    exit 77
  fi
}

# The installed library folder (lib/ or lib/<multiarch>/), for pkg-config.
use_prefix() {
  local pc
  pc=$(find "$prefix" -name hearth.pc -path '*/pkgconfig/*' | head -n 1)
  [[ -n "$pc" ]] || { echo "no hearth.pc under $prefix: did capi/install run?" >&2; exit 1; }
  export PKG_CONFIG_PATH=$(dirname "$pc")
  libdir=$("$PKG_CONFIG" --variable=libdir hearth)
}

case $step in
  install)
    rm -rf "$WORK"
    for component in core c python; do
      "$CMAKE" --install "$HEARTH_BINARY_DIR" --prefix "$prefix" --component "$component"
    done
    ;;

  exports)
    # Exactly the functions the header declares HEARTH_C_API, nothing of the
    # core, Abseil or the C++ runtime.
    exported=$(nm -D --defined-only "$HEARTH_C_LIBRARY" | awk '$2 != "A" {print $3}' |
               sed 's/@.*//' | sort)
    declared=$(grep -o '^HEARTH_C_API [^(]*(' "$HEARTH_SOURCE_DIR/include/hearth/c/hearth.h" |
               sed 's/($//; s/.*[ *]//' | sort)
    if grep -qi 'absl' <<<"$exported"; then
      echo "libhearth_c exports Abseil symbols:"; grep -i absl <<<"$exported"; exit 1
    fi
    if [[ "$exported" != "$declared" ]]; then
      echo "exported symbols differ from the header's HEARTH_C_API functions:"
      diff <(echo "$declared") <(echo "$exported") || true
      exit 1
    fi
    soname=$(readelf -d "$HEARTH_C_LIBRARY" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
    [[ "$soname" == libhearth_c.so.0 ]] || { echo "SONAME is '$soname'"; exit 1; }
    echo "libhearth_c ($soname) exports $(wc -l <<<"$exported") symbols, all hearth_*, as declared"
    ;;

  pkgconfig_c)
    skip_without "$PKG_CONFIG" pkg-config
    use_prefix
    mkdir -p "$WORK/pkgconfig_c"
    # shellcheck disable=SC2046  # pkg-config's flags are words
    "$CC" -std=c11 -pedantic-errors -Wall -Werror "$src/c/full_loop.c" \
          -o "$WORK/pkgconfig_c/full_loop" $("$PKG_CONFIG" --cflags --libs hearth) \
          -Wl,-rpath,"$libdir"
    # Captured first: under pipefail, grep -q closing the pipe early makes
    # ldd die of SIGPIPE and the pipeline fail although it matched.
    linked=$(ldd "$WORK/pkgconfig_c/full_loop")
    grep -q "$libdir/libhearth_c.so.0" <<<"$linked" ||
      { echo "not linked against the installed libhearth_c.so.0:"; echo "$linked"; exit 1; }
    "$WORK/pkgconfig_c/full_loop"
    ;;

  pkgconfig_static)
    skip_without "$PKG_CONFIG" pkg-config
    use_prefix
    mkdir -p "$WORK/pkgconfig_static"
    # shellcheck disable=SC2046
    "$CC" -std=c11 -pedantic-errors -Wall -Werror "$src/c/full_loop.c" \
          -o "$WORK/pkgconfig_static/full_loop" $("$PKG_CONFIG" --cflags --libs hearth-static)
    linked=$(ldd "$WORK/pkgconfig_static/full_loop")
    if grep -q libhearth_c <<<"$linked"; then
      echo "the static consumer loads libhearth_c.so"; exit 1
    fi
    "$WORK/pkgconfig_static/full_loop"
    # --static on the shared module lists what a static link needs, too.
    static_libs=$("$PKG_CONFIG" --static --libs hearth)
    grep -q -- '-lhearth ' <<<"$static_libs" ||
      { echo "pkg-config --static --libs hearth lacks the core"; exit 1; }
    ;;

  find_package)
    "$CMAKE" -S "$src/cmake_consumer" -B "$WORK/find_package" -G "$CMAKE_GENERATOR" \
             -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
             -DHEARTH_C_HOST="$src/c/full_loop.c" >/dev/null
    "$CMAKE" --build "$WORK/find_package" --parallel 2
    "$WORK/find_package/c_host_shared"
    "$WORK/find_package/c_host_static"
    ;;

  python_ctypes)
    skip_without "$PYTHON" python3
    skip_without "$PKG_CONFIG" pkg-config
    use_prefix
    "$PYTHON" "$src/python/vtc_vs_fifo.py"
    ;;

  python_package)
    # The installed package, loading the library of its own prefix: no
    # HEARTH_C_LIBRARY. Prefer a python3 with numpy (Debian's, when the one
    # on PATH is another), so both the numpy and memoryview paths run.
    skip_without "$PYTHON" python3
    py=$PYTHON
    if ! "$py" -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
      py=/usr/bin/python3
    fi
    packages=$(find "$prefix" -type d -name hearth -path '*/dist-packages/*' | head -n 1)
    [[ -n "$packages" ]] || { echo "no hearth package under $prefix" >&2; exit 1; }
    env -u HEARTH_C_LIBRARY PYTHONPATH="$(dirname "$packages")" HEARTH_PREFIX="$prefix" \
      "$py" "$src/python/package_test.py"
    ;;

  go_cgo)
    skip_without "$GO" go
    skip_without "$PKG_CONFIG" pkg-config
    use_prefix
    # Offline and inside the build tree: no module download, no toolchain
    # switch, caches under $WORK; the sources are copied so the build
    # writes nothing into the source tree.
    rm -rf "$WORK/go" && mkdir -p "$WORK/go"
    cp -r "$src/go" "$WORK/go/src"
    export GOCACHE=$WORK/go/cache GOPATH=$WORK/go/path GOFLAGS=-mod=mod \
           GOTOOLCHAIN=local GOPROXY=off GOSUMDB=off GO111MODULE=on CGO_ENABLED=1 \
           CGO_LDFLAGS="-Wl,-rpath,$libdir"
    (cd "$WORK/go/src" && "$GO" build -o "$WORK/go/host" .)
    "$WORK/go/host"
    ;;

  readme_c)
    # Every ```c block of README.md is a whole program: compile it as C11,
    # link it through pkg-config, run it.
    skip_without "$PKG_CONFIG" pkg-config
    use_prefix
    mkdir -p "$WORK/readme_c" && rm -f "$WORK"/readme_c/*.c
    awk -v out="$WORK/readme_c" '
      /^```c$/ { n++; file = sprintf("%s/snippet_%d.c", out, n); printf "#line %d \"README.md\"\n", NR + 1 > file; next }
      /^```$/ && file { close(file); file = ""; next }
      file { print > file }' "$HEARTH_SOURCE_DIR/README.md"
    shopt -s nullglob
    snippets=("$WORK"/readme_c/*.c)
    [[ ${#snippets[@]} -gt 0 ]] || { echo "README.md has no \`\`\`c block"; exit 1; }
    for snippet in "${snippets[@]}"; do
      # shellcheck disable=SC2046
      "$CC" -std=c11 -pedantic-errors -Wall -Werror "$snippet" -o "${snippet%.c}" \
            $("$PKG_CONFIG" --cflags --libs hearth) -Wl,-rpath,"$libdir"
      "${snippet%.c}"
    done
    echo "README.md: ${#snippets[@]} C example(s) compiled and ran"
    ;;

  *)
    echo "unknown step $step" >&2; exit 2 ;;
esac

# Precompiled headers for Hearth's heavier targets (simulator, server, C API,
# jobs, llama.cpp engine, tests): the standard library, Abseil and the public
# API are parsed once per target instead of once per source file, which was
# about a third of each file's compile time and most of CI's (two cores,
# three build trees). The core library precompiles only a few Abseil and
# standard headers (src/CMakeLists.txt), never the public API, and the
# install test compiles every public header on its own, so a header that
# stops including what it uses still fails the build.

option(HEARTH_PRECOMPILE_HEADERS "Precompile common headers for Hearth's own heavier targets"
       ${HEARTH_TOP_LEVEL})

set(HEARTH_COMMON_PCH
    <algorithm> <cmath> <cstdint> <functional> <map> <memory> <optional> <string>
    <string_view> <utility> <vector>
    <absl/status/status.h> <absl/status/statusor.h> <absl/strings/str_cat.h>
    <absl/strings/str_format.h> <absl/time/time.h> <absl/container/flat_hash_map.h>
    <hearth/hearth.h>)

# hearth_precompile(<target> [<header>...])
# The common set and the extra headers (in <angle brackets>), when
# HEARTH_PRECOMPILE_HEADERS is on.
function(hearth_precompile target)
  if(HEARTH_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} PRIVATE ${HEARTH_COMMON_PCH} ${ARGN})
  endif()
endfunction()

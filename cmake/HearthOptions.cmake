# Build options. Tests, benchmarks and examples are on when Hearth is the top
# level project and off when it is pulled in with add_subdirectory().
set(HEARTH_TOP_LEVEL ${PROJECT_IS_TOP_LEVEL})
option(HEARTH_BUILD_TESTS "Build Hearth's tests" ${HEARTH_TOP_LEVEL})
option(HEARTH_BUILD_BENCH "Build Hearth's benchmarks" ${HEARTH_TOP_LEVEL})
option(HEARTH_BUILD_EXAMPLES "Build Hearth's examples" ${HEARTH_TOP_LEVEL})
# hearth-serve without the other examples: the sanitizer stage runs the
# server's end-to-end API test on it (cmake/scripts/test.sh).
option(HEARTH_BUILD_SERVE "Build hearth-serve (examples/serve) even with HEARTH_BUILD_EXAMPLES off" OFF)
set(HEARTH_SANITIZE "" CACHE STRING "Sanitizers: empty, 'address,undefined' or 'thread'")
option(HEARTH_FUZZ "Build the libFuzzer targets in tests/fuzz (Clang only; implies ASan + UBSan)" OFF)
set(HEARTH_FUZZ_COVERAGE full CACHE STRING
    "With HEARTH_FUZZ: 'full' (libFuzzer's hooks, comparisons traced) or 'counters' (edge counters only)")
set_property(CACHE HEARTH_FUZZ_COVERAGE PROPERTY STRINGS full counters)

if(NOT CMAKE_CXX_STANDARD)
  set(CMAKE_CXX_STANDARD 20)
  set(CMAKE_CXX_STANDARD_REQUIRED ON)
  set(CMAKE_CXX_EXTENSIONS OFF)
endif()
if(HEARTH_TOP_LEVEL AND NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

if(HEARTH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "HEARTH_FUZZ needs Clang's libFuzzer, but the C++ compiler is "
                        "${CMAKE_CXX_COMPILER_ID}; configure with CXX=clang++ (Debian: clang, "
                        "libclang-rt-14-dev)")
  endif()
  if(HEARTH_SANITIZE AND NOT HEARTH_SANITIZE STREQUAL "address,undefined")
    message(FATAL_ERROR "HEARTH_FUZZ runs under ASan + UBSan; HEARTH_SANITIZE=${HEARTH_SANITIZE} "
                        "cannot be combined with it")
  endif()
  # A fuzz build is a sanitizer build: the fuzzers find nothing a sanitizer
  # would not report. Shadowing the cache entry keeps that true everywhere
  # HEARTH_SANITIZE is read (tests skip the install checks in such builds).
  set(HEARTH_SANITIZE address,undefined)
  # Coverage instrumentation for every Hearth library; only the fuzz targets
  # link libFuzzer's main (tests/fuzz/CMakeLists.txt). Traced comparisons
  # guide the fuzzers past magic values but make the same tree's tests run
  # 3-5x slower; edge counters alone cost the tests almost nothing, which is
  # why CI's one sanitizer tree (tests and a bounded fuzz run) uses them.
  if(HEARTH_FUZZ_COVERAGE STREQUAL "full")
    add_compile_options(-fsanitize=fuzzer-no-link)
  elseif(HEARTH_FUZZ_COVERAGE STREQUAL "counters")
    add_compile_options(-fsanitize-coverage=inline-8bit-counters,pc-table)
  else()
    message(FATAL_ERROR "HEARTH_FUZZ_COVERAGE is '${HEARTH_FUZZ_COVERAGE}'; "
                        "allowed: full, counters")
  endif()
endif()

if(HEARTH_SANITIZE)
  set(_hearth_san_flags -fsanitize=${HEARTH_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${_hearth_san_flags})
  add_link_options(${_hearth_san_flags})
endif()

include(${CMAKE_CURRENT_LIST_DIR}/HearthCuda.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/HearthPrecompiled.cmake)

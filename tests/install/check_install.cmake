# Installs the already-built Hearth into a scratch prefix, one install
# component at a time; checks that the core's umbrella headers include every
# header of the core; configures and builds a separate consumer project against the
# prefix with find_package(hearth COMPONENTS ...) and runs its programs; then
# builds the core consumer with Hearth pulled in by add_subdirectory. Any
# failing step fails the test. (The C API's consumers have tests of their
# own, tests/capi/; here its header is one more that must compile alone, as
# C++.) The consumers build unoptimised: what is checked is that they
# compile, link and run, and optimising them was most of this test's time.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
function(run_step)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
endfunction()

foreach(component IN ITEMS core reference sim cuda c jobs)
  run_step(${CMAKE_COMMAND} --install ${HEARTH_BINARY_DIR} --prefix ${prefix}
           --component ${component})
endforeach()

# The core's two umbrella headers, hearth/hearth.h (what a host engine
# needs) and hearth/metrics/metrics.h (the metrics component), cover the
# core: a core header neither includes is one a host has to discover on its
# own.
file(STRINGS ${HEARTH_BINARY_DIR}/install_manifest_core.txt core_files REGEX "/include/hearth/.*\\.h$")
file(READ ${prefix}/include/hearth/hearth.h umbrella)
file(READ ${prefix}/include/hearth/metrics/metrics.h metrics_umbrella)
string(APPEND umbrella "${metrics_umbrella}")
foreach(file IN LISTS core_files)
  string(REGEX REPLACE ".*/include/" "" header ${file})
  string(FIND "${umbrella}" "#include \"${header}\"" at)
  if(at EQUAL -1 AND NOT header STREQUAL "hearth/hearth.h" AND
     NOT header STREQUAL "hearth/metrics/metrics.h")
    message(FATAL_ERROR "neither hearth/hearth.h nor hearth/metrics/metrics.h includes ${header}, a header of the core")
  endif()
endforeach()

run_step(${CMAKE_COMMAND} -S ${HEARTH_SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build
         -G ${CMAKE_GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_CXX_FLAGS_RELEASE=-O0)
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel 2)
run_step(${WORK_DIR}/build/consumer)
run_step(${WORK_DIR}/build/every_header)
message(STATUS "installed package builds and runs a consumer; every installed header compiles alone")

# The simulator's command line ships with sim, when the examples were built.
if(EXISTS ${HEARTH_BINARY_DIR}/examples/simulator/hearth_sim_cli
   AND NOT EXISTS ${prefix}/bin/hearth-sim)
  message(FATAL_ERROR "the sim component did not install bin/hearth-sim")
endif()

run_step(${CMAKE_COMMAND} -S ${HEARTH_SOURCE_DIR}/tests/install/subdir_consumer -B ${WORK_DIR}/subdir
         -G ${CMAKE_GENERATOR} -DHEARTH_SOURCE_DIR=${HEARTH_SOURCE_DIR} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_CXX_FLAGS_RELEASE=-O0)
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/subdir --target consumer --parallel 2)
run_step(${WORK_DIR}/subdir/consumer)
message(STATUS "add_subdirectory(hearth) builds and runs the same consumer")

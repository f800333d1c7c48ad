# Installs the already-built Hearth into a scratch prefix, one install
# component at a time; configures and builds a separate consumer project against the
# prefix with find_package(hearth COMPONENTS ...) and runs its programs; then
# builds the core consumer with Hearth pulled in by add_subdirectory. Any
# failing step fails the test.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
function(run_step)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
endfunction()

foreach(component IN ITEMS core reference sim cuda)
  run_step(${CMAKE_COMMAND} --install ${HEARTH_BINARY_DIR} --prefix ${prefix}
           --component ${component})
endforeach()

run_step(${CMAKE_COMMAND} -S ${HEARTH_SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build
         -G ${CMAKE_GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel 2)
run_step(${WORK_DIR}/build/consumer)
run_step(${WORK_DIR}/build/every_header)
message(STATUS "installed package builds and runs a consumer; every installed header compiles alone")

run_step(${CMAKE_COMMAND} -S ${HEARTH_SOURCE_DIR}/tests/install/subdir_consumer -B ${WORK_DIR}/subdir
         -G ${CMAKE_GENERATOR} -DHEARTH_SOURCE_DIR=${HEARTH_SOURCE_DIR} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_CXX_FLAGS_RELEASE=-O1)
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/subdir --target consumer --parallel 2)
run_step(${WORK_DIR}/subdir/consumer)
message(STATUS "add_subdirectory(hearth) builds and runs the same consumer")

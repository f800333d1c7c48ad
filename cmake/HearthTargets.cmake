# What every Hearth library has in common, so that the core and each
# component (reference executor, simulator, CUDA executor) are declared alike.

# hearth_library_properties(<target> <name> [HEADERS <header>...])
# Gives an existing library target the alias hearth::<name>, which is also
# its exported name, so in-tree and installed consumers spell it the same;
# C++20; src/ for internal headers; the project's warnings when Hearth is the
# top-level project; and HEADERS (paths under include/) as its public file
# set, which install(TARGETS ... FILE_SET HEADERS) ships with it.
function(hearth_library_properties target name)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "HEADERS")
  add_library(hearth::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  if(arg_HEADERS)
    list(TRANSFORM arg_HEADERS PREPEND ${PROJECT_SOURCE_DIR}/include/)
    target_sources(${target} PUBLIC FILE_SET HEADERS
                   BASE_DIRS ${PROJECT_SOURCE_DIR}/include FILES ${arg_HEADERS})
  endif()
  if(HEARTH_TOP_LEVEL)
    # CXX only: nvcc rejects these GCC flags on CUDA sources.
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  endif()
endfunction()

# hearth_library(<target> <name> SOURCES <source>... [HEADERS <header>...])
# A plain C++ Hearth library built from SOURCES (paths relative to the
# calling directory), set up by hearth_library_properties().
function(hearth_library target name)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "SOURCES;HEADERS")
  add_library(${target} ${arg_SOURCES})
  hearth_library_properties(${target} ${name} HEADERS ${arg_HEADERS})
endfunction()

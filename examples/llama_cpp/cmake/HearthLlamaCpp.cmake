# Finds llama.cpp for Hearth's llama.cpp integration and defines, once per
# build, the targets the example and its tests share.
#
# Where llama.cpp is looked for, first match wins:
#   1. LLAMA_CPP_ROOT (cache variable or environment): a llama.cpp install
#      prefix (or build tree) of the user's own, e.g. a CUDA build. Its CMake
#      package (lib/cmake/llama) is used when present, else include/llama.h
#      and lib/libllama*.so are searched directly.
#   2. find_package(llama CONFIG): llama.cpp installed where CMake looks
#      (CMAKE_PREFIX_PATH, llama_DIR, system prefixes).
#   3. <hearth>/.deps/llama_cpp: the pinned prebuilt CPU build that
#      examples/llama_cpp/install_llama_cpp.sh puts there.
#
# Results (in the including scope):
#   HEARTH_LLAMA_CPP_FOUND        TRUE when llama.cpp was found
#   HEARTH_LLAMA_CPP_BACKEND_DIR  folder with dynamically loadable ggml
#                                 backends (may be empty for static builds)
# Targets (global, defined by the first include that finds llama.cpp):
#   hearth_llama_cpp::llama       imported: llama.h + libllama + libggml +
#                                 libggml-base (the gguf_* writer lives there)
#   hearth_llama_cpp              the integration library (engine, executor,
#                                 tiny GGUF writer), linking hearth::hearth
#
# Nothing here downloads or compiles llama.cpp.

set(LLAMA_CPP_ROOT "$ENV{LLAMA_CPP_ROOT}" CACHE PATH
    "Install prefix of a llama.cpp build to use instead of the pinned prebuilt one")

# Where this file's sources live, whoever includes it.
set(_hearth_llama_dir "${CMAKE_CURRENT_LIST_DIR}/..")
get_filename_component(_hearth_llama_dir "${_hearth_llama_dir}" ABSOLUTE)

# Imports llama.cpp found as plain files under `root` (include/ and lib/).
function(_hearth_llama_import_files root)
  find_path(HEARTH_LLAMA_INCLUDE_DIR llama.h
            PATHS "${root}/include" NO_DEFAULT_PATH NO_CACHE)
  find_library(HEARTH_LLAMA_LIBRARY NAMES llama llama.v0.5.0
               PATHS "${root}/lib" "${root}/lib64" "${root}/bin" NO_DEFAULT_PATH NO_CACHE)
  find_library(HEARTH_GGML_LIBRARY NAMES ggml ggml.v0.5.0
               PATHS "${root}/lib" "${root}/lib64" "${root}/bin" NO_DEFAULT_PATH NO_CACHE)
  find_library(HEARTH_GGML_BASE_LIBRARY NAMES ggml-base
               PATHS "${root}/lib" "${root}/lib64" "${root}/bin" NO_DEFAULT_PATH NO_CACHE)
  if(NOT HEARTH_LLAMA_INCLUDE_DIR OR NOT HEARTH_LLAMA_LIBRARY OR
     NOT HEARTH_GGML_LIBRARY OR NOT HEARTH_GGML_BASE_LIBRARY)
    return()
  endif()
  add_library(hearth_llama_cpp::llama INTERFACE IMPORTED GLOBAL)
  target_include_directories(hearth_llama_cpp::llama INTERFACE "${HEARTH_LLAMA_INCLUDE_DIR}")
  target_link_libraries(hearth_llama_cpp::llama INTERFACE
    "${HEARTH_LLAMA_LIBRARY}" "${HEARTH_GGML_LIBRARY}" "${HEARTH_GGML_BASE_LIBRARY}")
  get_filename_component(_libdir "${HEARTH_LLAMA_LIBRARY}" DIRECTORY)
  set(HEARTH_LLAMA_CPP_BACKEND_DIR_INTERNAL "${_libdir}" CACHE INTERNAL "")
  set(HEARTH_LLAMA_CPP_SOURCE_INTERNAL "files under ${root}" CACHE INTERNAL "")
endfunction()

# Imports llama.cpp through its own CMake package (targets llama, ggml::*).
function(_hearth_llama_import_package)
  find_package(llama CONFIG QUIET ${ARGN})
  if(NOT llama_FOUND OR NOT TARGET llama)
    return()
  endif()
  add_library(hearth_llama_cpp::llama INTERFACE IMPORTED GLOBAL)
  target_link_libraries(hearth_llama_cpp::llama INTERFACE llama)
  if(TARGET ggml::ggml-base)
    target_link_libraries(hearth_llama_cpp::llama INTERFACE ggml::ggml-base)
  endif()
  if(TARGET ggml::ggml)
    target_link_libraries(hearth_llama_cpp::llama INTERFACE ggml::ggml)
  endif()
  # llama-config.cmake exports LLAMA_LIB_DIR; backends built as loadable
  # modules (GGML_BACKEND_DL) sit there, static ones need no loading.
  set(HEARTH_LLAMA_CPP_BACKEND_DIR_INTERNAL "${LLAMA_LIB_DIR}" CACHE INTERNAL "")
  set(HEARTH_LLAMA_CPP_SOURCE_INTERNAL "CMake package at ${llama_DIR}" CACHE INTERNAL "")
endfunction()

if(NOT TARGET hearth_llama_cpp::llama)
  if(LLAMA_CPP_ROOT)
    _hearth_llama_import_package(PATHS "${LLAMA_CPP_ROOT}" NO_DEFAULT_PATH)
    if(NOT TARGET hearth_llama_cpp::llama)
      _hearth_llama_import_files("${LLAMA_CPP_ROOT}")
    endif()
    if(NOT TARGET hearth_llama_cpp::llama)
      message(WARNING "LLAMA_CPP_ROOT=${LLAMA_CPP_ROOT} holds no llama.cpp "
                      "(need lib/cmake/llama, or include/llama.h with lib/libllama, "
                      "libggml and libggml-base); the llama.cpp example and tests are skipped")
    endif()
  else()
    _hearth_llama_import_package()
    if(NOT TARGET hearth_llama_cpp::llama)
      _hearth_llama_import_files("${_hearth_llama_dir}/../../.deps/llama_cpp")
    endif()
  endif()
  if(TARGET hearth_llama_cpp::llama)
    message(STATUS "Hearth: llama.cpp from ${HEARTH_LLAMA_CPP_SOURCE_INTERNAL}")
  else()
    message(STATUS "Hearth: llama.cpp not found; the llama.cpp example and tests are skipped "
                   "(run examples/llama_cpp/install_llama_cpp.sh or set LLAMA_CPP_ROOT)")
  endif()
endif()

if(TARGET hearth_llama_cpp::llama AND NOT TARGET hearth_llama_cpp)
  file(GLOB _hearth_llama_sources CONFIGURE_DEPENDS "${_hearth_llama_dir}/src/*.cc")
  add_library(hearth_llama_cpp STATIC ${_hearth_llama_sources})
  target_include_directories(hearth_llama_cpp PUBLIC "${_hearth_llama_dir}/include")
  target_link_libraries(hearth_llama_cpp PUBLIC hearth::hearth hearth_llama_cpp::llama)
  target_compile_definitions(hearth_llama_cpp PUBLIC
    HEARTH_LLAMA_CPP_BACKEND_DIR="${HEARTH_LLAMA_CPP_BACKEND_DIR_INTERNAL}")
  if(HEARTH_TOP_LEVEL)
    target_compile_options(hearth_llama_cpp PRIVATE -Wall -Wextra -Wno-unused-parameter)
  endif()
  hearth_precompile(hearth_llama_cpp)
endif()

if(TARGET hearth_llama_cpp)
  set(HEARTH_LLAMA_CPP_FOUND TRUE)
  set(HEARTH_LLAMA_CPP_BACKEND_DIR "${HEARTH_LLAMA_CPP_BACKEND_DIR_INTERNAL}")
else()
  set(HEARTH_LLAMA_CPP_FOUND FALSE)
  set(HEARTH_LLAMA_CPP_BACKEND_DIR "")
endif()

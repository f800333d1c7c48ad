# Defines, once per build, `hearth_serve`: the server's library (everything
# but main), shared by the hearth-serve program and its tests, on top of
# `hearth_serve_parsers` (HearthServeParsers.cmake).
#
# Needs llama.cpp (see examples/llama_cpp/cmake/HearthLlamaCpp.cmake),
# cpp-httplib (Debian's libcpp-httplib-dev, found with pkg-config: it is
# compiled into libcpp-httplib.so, and the defines its .pc file lists must
# match how it was built), nlohmann-json and toml++; and llama.cpp's JSON
# schema converter when its sources are there (HearthJsonSchema.cmake).
#
# Result: HEARTH_SERVE_FOUND.

include(${CMAKE_CURRENT_LIST_DIR}/HearthServeParsers.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/../../llama_cpp/cmake/HearthLlamaCpp.cmake)
set(_hearth_serve_dir "${CMAKE_CURRENT_LIST_DIR}/..")
get_filename_component(_hearth_serve_dir "${_hearth_serve_dir}" ABSOLUTE)

if(NOT TARGET hearth_serve AND HEARTH_LLAMA_CPP_FOUND)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(HEARTH_HTTPLIB QUIET IMPORTED_TARGET GLOBAL cpp-httplib)
  endif()
  find_package(nlohmann_json 3 QUIET)
  find_package(tomlplusplus QUIET)
  if(NOT HEARTH_HTTPLIB_FOUND OR NOT TARGET hearth_serve_parsers)
    message(STATUS "Hearth: hearth-serve skipped (needs libcpp-httplib-dev, nlohmann-json3-dev, "
                   "libtomlplusplus-dev; cmake/scripts/setup_debian.sh installs them)")
  else()
    # The dashboard page, embedded as a raw string literal.
    file(READ "${_hearth_serve_dir}/dashboard.html" HEARTH_DASHBOARD_HTML)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_hearth_serve_dir}/dashboard.html")
    configure_file("${_hearth_serve_dir}/dashboard_page.cc.in"
                   "${CMAKE_BINARY_DIR}/hearth_serve/dashboard_page.cc" @ONLY)
    file(GLOB _hearth_serve_sources CONFIGURE_DEPENDS "${_hearth_serve_dir}/src/*.cc")
    foreach(_parser IN LISTS HEARTH_SERVE_PARSER_SOURCES)
      list(REMOVE_ITEM _hearth_serve_sources "${_hearth_serve_dir}/src/${_parser}")
    endforeach()
    add_library(hearth_serve STATIC ${_hearth_serve_sources}
                "${CMAKE_BINARY_DIR}/hearth_serve/dashboard_page.cc")
    target_include_directories(hearth_serve PUBLIC "${_hearth_serve_dir}/src")
    target_link_libraries(hearth_serve PUBLIC hearth_serve_parsers hearth_llama_cpp hearth::jobs
                          PkgConfig::HEARTH_HTTPLIB nlohmann_json::nlohmann_json
                          PRIVATE tomlplusplus::tomlplusplus)
    hearth_precompile(hearth_serve <nlohmann/json.hpp> <httplib.h>)
    if(HEARTH_TOP_LEVEL)
      target_compile_options(hearth_serve PRIVATE -Wall -Wextra -Wno-unused-parameter)
    endif()
    include(${CMAKE_CURRENT_LIST_DIR}/HearthJsonSchema.cmake)
  endif()
endif()

if(TARGET hearth_serve)
  set(HEARTH_SERVE_FOUND TRUE)
else()
  set(HEARTH_SERVE_FOUND FALSE)
endif()

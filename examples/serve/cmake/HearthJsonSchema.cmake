# Compiles llama.cpp's JSON-schema-to-grammar converter into hearth-serve
# (src/schema_grammar.h). The pinned prebuilt libraries do not carry it;
# examples/llama_cpp/install_llama_cpp.sh extracts its sources, and the
# vendored nlohmann json they include, from the same llama.cpp tree into
# .deps/llama_cpp/schema. HEARTH_LLAMA_SCHEMA_DIR may point at another
# folder of that layout (common/, vendor/nlohmann/), e.g. a llama.cpp
# checkout.
#
# Included by HearthServe.cmake once hearth_serve exists. Result: the
# target hearth_llama_json_schema, and hearth_serve built with
# json_schema/schema_grammar_llama.cc; without the sources, hearth_serve
# gets json_schema/schema_grammar_absent.cc (every schema refused, saying
# why) and a status message.

set(HEARTH_LLAMA_SCHEMA_DIR "${_hearth_serve_dir}/../../.deps/llama_cpp/schema" CACHE PATH
    "llama.cpp sources of the JSON-schema-to-grammar converter (common/, vendor/nlohmann/)")
set(_hearth_schema_dir "${_hearth_serve_dir}/json_schema")
set(_hearth_schema_sources json-schema-to-grammar.cpp json-schema.cpp json.cpp trie.cpp
                           unicode.cpp)
list(TRANSFORM _hearth_schema_sources PREPEND "${HEARTH_LLAMA_SCHEMA_DIR}/common/")
set(_hearth_schema_found TRUE)
foreach(_file IN LISTS _hearth_schema_sources ITEMS
        "${HEARTH_LLAMA_SCHEMA_DIR}/vendor/nlohmann/json.hpp")
  if(NOT EXISTS "${_file}")
    set(_hearth_schema_found FALSE)
  endif()
endforeach()

if(_hearth_schema_found AND NOT TARGET hearth_llama_json_schema)
  # llama.cpp's code, built as llama.cpp builds it (C++17, its own
  # warnings are not ours). The vendored nlohmann (3.12) is on this
  # target's include path only: Hearth's own code uses Debian's, and the
  # two never meet (common_json hides it, and their inline namespaces
  # differ).
  add_library(hearth_llama_json_schema STATIC ${_hearth_schema_sources}
              "${_hearth_schema_dir}/llama_common_strings.cc")
  target_include_directories(hearth_llama_json_schema
    PUBLIC "${HEARTH_LLAMA_SCHEMA_DIR}/common"
    PRIVATE "${_hearth_schema_dir}" "${HEARTH_LLAMA_SCHEMA_DIR}/vendor")
  # json.cpp asserts with GGML_ASSERT (ggml.h, libggml-base).
  target_link_libraries(hearth_llama_json_schema PRIVATE hearth_llama_cpp::llama)
  set_target_properties(hearth_llama_json_schema PROPERTIES CXX_STANDARD 17
                        POSITION_INDEPENDENT_CODE ON)
endif()

if(TARGET hearth_llama_json_schema)
  target_sources(hearth_serve PRIVATE "${_hearth_schema_dir}/schema_grammar_llama.cc")
  target_link_libraries(hearth_serve PRIVATE hearth_llama_json_schema)
else()
  target_sources(hearth_serve PRIVATE "${_hearth_schema_dir}/schema_grammar_absent.cc")
  message(STATUS "Hearth: hearth-serve without JSON schemas (no llama.cpp converter sources in "
                 "${HEARTH_LLAMA_SCHEMA_DIR}; examples/llama_cpp/install_llama_cpp.sh puts them "
                 "there)")
endif()

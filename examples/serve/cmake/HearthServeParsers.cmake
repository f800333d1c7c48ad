# Defines, once per build, `hearth_serve_parsers`: hearth-serve's readers of
# what comes from outside -- request bodies (openai_request,
# sampling_fields, unsupported_fields, ollama_request, tokenize_request,
# embedding_request), documents
# (document_request, document_text), the household file (household_config),
# keys and class headers (household_directory, request_credentials), the CORS origins
# (cors_policy) and the prompt's byte bound
# (prompt_bound) -- which need neither llama.cpp nor cpp-httplib, so that the
# fuzz targets (tests/fuzz) build them alone. A parser added to the server
# belongs in the list below when it needs neither.
#
# Needs nlohmann-json and toml++. Result: target hearth_serve_parsers, when
# both are found.

set(_hearth_serve_parsers_dir "${CMAKE_CURRENT_LIST_DIR}/../src")
get_filename_component(_hearth_serve_parsers_dir "${_hearth_serve_parsers_dir}" ABSOLUTE)
set(HEARTH_SERVE_PARSER_SOURCES
    openai_request.cc sampling_fields.cc unsupported_fields.cc ollama_request.cc
    document_request.cc document_text.cc
    household_config.cc household_directory.cc prompt_bound.cc request_credentials.cc
    tokenize_request.cc embedding_request.cc cors_policy.cc logprobs_field.cc logit_bias_field.cc grammar_field.cc)

if(NOT TARGET hearth_serve_parsers)
  find_package(nlohmann_json 3 QUIET)
  find_package(tomlplusplus QUIET)
  if(nlohmann_json_FOUND AND tomlplusplus_FOUND)
    list(TRANSFORM HEARTH_SERVE_PARSER_SOURCES PREPEND "${_hearth_serve_parsers_dir}/"
         OUTPUT_VARIABLE _hearth_serve_parser_paths)
    add_library(hearth_serve_parsers STATIC ${_hearth_serve_parser_paths})
    target_include_directories(hearth_serve_parsers PUBLIC "${_hearth_serve_parsers_dir}")
    target_link_libraries(hearth_serve_parsers PUBLIC hearth::hearth nlohmann_json::nlohmann_json
                          PRIVATE tomlplusplus::tomlplusplus)
    hearth_precompile(hearth_serve_parsers <nlohmann/json.hpp>)
    if(HEARTH_TOP_LEVEL)
      target_compile_options(hearth_serve_parsers PRIVATE -Wall -Wextra -Wno-unused-parameter)
    endif()
  endif()
endif()

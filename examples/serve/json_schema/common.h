// File: examples/serve/json_schema/common.h
//
// Stands in for llama.cpp's common/common.h when its JSON-schema-to-grammar
// converter (common/json-schema-to-grammar.cpp, extracted by
// examples/llama_cpp/install_llama_cpp.sh) is compiled into hearth-serve.
// The converter uses three string helpers from it; the real header brings
// all of llama.cpp's `common` (sampling, downloads, chat templates), which
// the pinned libraries do not ship. Found by the converter's
// `#include "common.h"` only: this folder is on that target's include path
// alone (HearthJsonSchema.cmake).

#pragma once

#include <cstddef>
#include <string>
#include <vector>

// Definitions: llama_common_strings.cc, as in llama.cpp's common/common.cpp.
std::string string_join(const std::vector<std::string>& values, const std::string& separator);
std::vector<std::string> string_split(const std::string& str, const std::string& delimiter);
std::string string_repeat(const std::string& str, size_t n);

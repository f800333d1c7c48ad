// JsonSchemaToGrammar in a build without llama.cpp's converter sources
// (schema_grammar.h): every schema is refused, saying how to get them.

#include <string>

#include "absl/strings/str_cat.h"
#include "error_param.h"
#include "schema_grammar.h"

namespace hearth::serve {

absl::StatusOr<std::string> JsonSchemaToGrammar(const std::string&, absl::string_view field) {
  return WithParam(absl::InvalidArgumentError(absl::StrCat(
                       "'", field,
                       "' is not supported by this build: it has no JSON-schema-to-grammar "
                       "converter (examples/llama_cpp/install_llama_cpp.sh puts llama.cpp's in "
                       ".deps/llama_cpp/schema; reconfigure after it). Use 'grammar' (GBNF) or "
                       "response_format json_object")),
                   field);
}

bool HasJsonSchemaConverter() { return false; }

}  // namespace hearth::serve

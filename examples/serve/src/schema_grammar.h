// File: examples/serve/src/schema_grammar.h
//
// Turns a JSON schema (response_format json_schema, llama-server's
// `json_schema`, Ollama's `format`; read and bounded by grammar_field.h)
// into GBNF with llama.cpp's own converter, json_schema_to_grammar from
// its common/json-schema-to-grammar.cpp. The pinned prebuilt libraries do
// not carry it, so its sources come from the same llama.cpp tree
// (examples/llama_cpp/install_llama_cpp.sh puts them in
// .deps/llama_cpp/schema) and are compiled into hearth-serve
// (HearthJsonSchema.cmake); a build without them answers every schema
// with an InvalidArgument saying so (schema_grammar_absent.cc).
//
// Runs in the member's CPU turn, before the grammar is compiled
// (prepare_generation.h): the conversion's cost grows with the schema.
// Never throws: the converter's exceptions (a schema outside the subset
// it supports) become InvalidArgument naming `field`, with its reason.
// Thread-safe.
//
// Example:
//   absl::StatusOr<std::string> gbnf = JsonSchemaToGrammar(
//       R"({"type": "object", "properties": {"name": {"type": "string"}}})",
//       "response_format.json_schema.schema");

#ifndef HEARTH_SERVE_SCHEMA_GRAMMAR_H_
#define HEARTH_SERVE_SCHEMA_GRAMMAR_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hearth::serve {

// REQUIRES: `schema` is JSON text. The GBNF (start rule `root`), or
// InvalidArgument whose param is `field`.
absl::StatusOr<std::string> JsonSchemaToGrammar(const std::string& schema,
                                                absl::string_view field);

// Whether this build carries llama.cpp's converter.
bool HasJsonSchemaConverter();

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_SCHEMA_GRAMMAR_H_

// File: examples/serve/src/grammar_field.h
//
// Reads the fields that constrain an answer to a grammar: llama-server's
// `grammar` (a GBNF string, start rule `root`), OpenAI's `response_format`
// {"type": "json_object"} (kJsonObjectGrammar: one JSON object) and
// {"type": "json_schema", "json_schema": {"name", "schema", "strict"}},
// and llama-server's schema fields (`json_schema`, response_format
// json_object's `schema`). Only the text is checked here
// (CheckGrammarText: at most kMaxGrammarBytes, no NUL byte, parentheses
// nested at most kMaxGrammarNesting deep, so that llama.cpp's recursive
// parser has a bounded stack, and repetitions {m,n} with m <= n <=
// kMaxGrammarRepetition) and a schema's size and shape (ReadJsonSchema);
// the schema is converted (schema_grammar.h) and the grammar compiled
// (grammar_sampler.h) in the member's turn, before the request is queued.
//
// Example:
//   GenerationRequest r;
//   absl::Status s = ReadGrammar(body, r);  // r.grammar or r.json_schema,
//                                           // and r.grammar_field

#ifndef HEARTH_SERVE_GRAMMAR_FIELD_H_
#define HEARTH_SERVE_GRAMMAR_FIELD_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "openai_request.h"

namespace hearth::serve {

inline constexpr size_t kMaxGrammarBytes = 32 * 1024;
inline constexpr int kMaxGrammarNesting = 64;
// llama.cpp's own bound (MAX_REPETITION_THRESHOLD in llama-grammar.cpp):
// it refuses a larger minimum and silently drops a larger maximum.
inline constexpr int64_t kMaxGrammarRepetition = 2000;
// What a grammar converted from a schema may grow to: enums, integer
// bounds and optional properties expand.
inline constexpr size_t kMaxSchemaGrammarBytes = 4 * kMaxGrammarBytes;

// A schema's bounds, checked before conversion: llama.cpp's converter
// recurses with the nesting, runs std::regex (recursive) over each key and
// $ref, and takes time growing faster than the square of an object's
// property count (about 0.1 s at 128).
inline constexpr size_t kMaxSchemaBytes = 32 * 1024;  // as serialised JSON
inline constexpr int kMaxSchemaDepth = 32;            // objects and arrays
inline constexpr size_t kMaxSchemaProperties = 128;   // "properties" keys, in all
inline constexpr size_t kMaxSchemaKeyBytes = 256;     // every key, and every $ref

// GBNF for one JSON object (RFC 8259's grammar, whitespace between tokens
// bounded so that an answer cannot pad forever).
extern const char kJsonObjectGrammar[];

// REQUIRES: `body` is a JSON object. Sets r.grammar or r.json_schema, and
// r.grammar_field (the field, for errors: "grammar", "response_format",
// "response_format.json_schema.schema", "response_format.schema" or
// "json_schema"); two asked at once is InvalidArgument.
absl::Status ReadGrammar(const nlohmann::json& body, GenerationRequest& r);

// `schema` (a JSON object within the bounds above) as r.json_schema, with
// `field` as r.grammar_field; else InvalidArgument naming `field`. Also
// what Ollama's `format` uses.
absl::Status ReadJsonSchema(const nlohmann::json& schema, absl::string_view field,
                            GenerationRequest& r);

// r.json_schema as `body` orders the schema's keys: the answer's properties
// are generated in the schema's order (a "reasoning" before an "answer"),
// and nlohmann::json, which the parsers read the body with, sorts them.
// REQUIRES: r came from `body` (its grammar_field is the schema's path).
void KeepSchemaOrder(absl::string_view body, GenerationRequest& r);

// InvalidArgument naming `field` unless `gbnf` has at most `max_bytes`, no
// NUL, nesting within kMaxGrammarNesting and repetitions {m,n} with
// m <= n <= kMaxGrammarRepetition (a larger n is refused rather than left
// to llama.cpp to drop; n < m would make its parser loop).
absl::Status CheckGrammarText(absl::string_view gbnf, absl::string_view field,
                              size_t max_bytes = kMaxGrammarBytes);

// What CheckGrammarText reads of `gbnf` outside its string literals,
// character classes and comments.
struct GrammarShape {
  // How deep its parentheses nest.
  int nesting = 0;
  // The largest count of a repetition {m} {m,} {m,n} (capped at 2^31).
  int64_t largest_repetition = 0;
  // Whether a repetition {m,n} has n < m.
  bool inverted_repetition = false;
};
GrammarShape ScanGrammar(absl::string_view gbnf);
inline int GrammarNesting(absl::string_view gbnf) { return ScanGrammar(gbnf).nesting; }

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_GRAMMAR_FIELD_H_

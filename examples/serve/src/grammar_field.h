// File: examples/serve/src/grammar_field.h
//
// Reads the fields that constrain an answer to a grammar: llama-server's
// `grammar` (a GBNF string, start rule `root`) and OpenAI's
// `response_format` {"type": "json_object"} (kJsonObjectGrammar: one JSON
// object). Only the text is checked here -- at most kMaxGrammarBytes, no
// NUL byte, parentheses nested at most kMaxGrammarNesting deep, so that
// llama.cpp's recursive parser has a bounded stack -- and whether it
// parses is decided when it is compiled (grammar_sampler.h), in the
// member's turn, before the request is queued.
//
// response_format {"type": "json_schema"} is refused: the pinned llama.cpp
// libraries carry no schema-to-grammar converter (that lives in llama.cpp's
// `common`, which is not shipped).
//
// Example:
//   GenerationRequest r;
//   absl::Status s = ReadGrammar(body, r);  // r.grammar, r.grammar_field

#ifndef HEARTH_SERVE_GRAMMAR_FIELD_H_
#define HEARTH_SERVE_GRAMMAR_FIELD_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "openai_request.h"

namespace hearth::serve {

inline constexpr size_t kMaxGrammarBytes = 32 * 1024;
inline constexpr int kMaxGrammarNesting = 64;

// GBNF for one JSON object (RFC 8259's grammar, whitespace between tokens
// bounded so that an answer cannot pad forever).
extern const char kJsonObjectGrammar[];

// REQUIRES: `body` is a JSON object. Sets r.grammar and r.grammar_field
// ("grammar" or "response_format"); both asked at once is InvalidArgument.
absl::Status ReadGrammar(const nlohmann::json& body, GenerationRequest& r);

// How deep `gbnf`'s parentheses nest outside its string literals,
// character classes and comments.
int GrammarNesting(absl::string_view gbnf);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_GRAMMAR_FIELD_H_

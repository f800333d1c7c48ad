// File: examples/serve/src/tokenize_response.h
//
// The bodies POST /tokenize and POST /detokenize answer with, in
// llama-server's shapes:
//   {"tokens": [15339, 1917]}
//   {"tokens": [{"id": 15339, "piece": "Hello"}, {"id": 239, "piece": [226]}]}
//   {"content": "Hello world"}
// A piece that is not valid UTF-8 on its own (a byte token, half of a
// character) is given as its bytes, so that nothing is lost to U+FFFD; a
// detokenized text is given as a string (Dump replaces invalid UTF-8), as
// llama-server does.
//
// Thread-safety: plain functions.

#ifndef HEARTH_SERVE_TOKENIZE_RESPONSE_H_
#define HEARTH_SERVE_TOKENIZE_RESPONSE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {

// A token's bytes (ModelText::Piece with control tokens spelled out).
using PieceOf = std::function<std::string(int32_t)>;

// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF).
bool IsValidUtf8(absl::string_view text);

nlohmann::json TokenizeResponse(const std::vector<int32_t>& tokens, bool with_pieces,
                                const PieceOf& piece);
nlohmann::json DetokenizeResponse(const std::vector<int32_t>& tokens, const PieceOf& piece);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_TOKENIZE_RESPONSE_H_

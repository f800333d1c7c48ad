// File: examples/serve/src/tokenize_request.h
//
// Parses and validates the bodies of POST /tokenize and POST /detokenize,
// in llama-server's shapes:
//   {"content": "text", "add_special": false, "parse_special": true,
//    "with_pieces": false}                       -> TokenizeRequest
//   {"tokens": [15339, 1917]}                    -> DetokenizeRequest
// Every field is checked before use and every error is InvalidArgument
// naming its field (error_param.h: the OpenAI error's `param`). Unlike
// llama-server, `content` must be one string (not a mix of strings and
// token ids) and a token id must be an integer of the vocabulary: an id
// out of range would read past llama.cpp's tables. Never throws.
//
// Example:
//   absl::StatusOr<DetokenizeRequest> r =
//       ParseDetokenizeRequest(body, /*vocab_size=*/32000, /*max_tokens=*/8192);

#ifndef HEARTH_SERVE_TOKENIZE_REQUEST_H_
#define HEARTH_SERVE_TOKENIZE_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hearth::serve {

struct TokenizeRequest {
  std::string content;
  // llama-server's defaults: no BOS/EOS added, special tokens' spelling
  // read as those tokens, ids only.
  bool add_special = false;
  bool parse_special = true;
  bool with_pieces = false;
};

struct DetokenizeRequest {
  // Each in [0, vocab_size).
  std::vector<int32_t> tokens;
};

absl::StatusOr<TokenizeRequest> ParseTokenizeRequest(absl::string_view body);

// `max_tokens`: the most ids one request may hold (more: InvalidArgument,
// checked before any element is read).
absl::StatusOr<DetokenizeRequest> ParseDetokenizeRequest(absl::string_view body,
                                                         int32_t vocab_size, size_t max_tokens);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_TOKENIZE_REQUEST_H_

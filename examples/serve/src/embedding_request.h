// File: examples/serve/src/embedding_request.h
//
// The body of an embeddings call, parsed: OpenAI's POST /v1/embeddings
// here, Ollama's /api/embed and /api/embeddings in ollama_request.h. Inputs
// are texts or token ids, at most kMaxEmbeddingInputs of them, none empty.
// Every field is read or refused naming it (400), as for generations.
//
// Thread-safety: pure functions.

#ifndef HEARTH_SERVE_EMBEDDING_REQUEST_H_
#define HEARTH_SERVE_EMBEDDING_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {

// Inputs one call may embed: each is a request of its own in the member's
// queue, so a call is bounded like a member's burst of chats would be.
inline constexpr size_t kMaxEmbeddingInputs = 256;

struct EmbeddingRequest {
  std::string model;
  // One of the two is filled, in input order: texts to tokenize, or
  // inputs given as token ids (OpenAI's array forms).
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> token_inputs;
  // OpenAI's encoding_format "base64": each vector as the base64 of its
  // little-endian float32 bytes.
  bool base64 = false;
  // OpenAI's `dimensions`: must equal the model's width if given (the
  // vectors are not truncated).
  std::optional<int64_t> dimensions;
  // Ollama's `truncate` (default true there): an input longer than the
  // context is cut to it rather than refused.
  bool truncate = false;

  size_t size() const { return texts.empty() ? token_inputs.size() : texts.size(); }
};

// OpenAI's body: model, input (a string, an array of strings, an array of
// token ids, or an array of such arrays), encoding_format ("float" or
// "base64"), dimensions, user.
absl::StatusOr<EmbeddingRequest> ParseEmbeddingRequest(absl::string_view body);

// `input` of either API into `r`: a string or an array of strings, or
// (`token_arrays`, OpenAI only) token ids. InvalidArgument naming `field`.
absl::Status ReadEmbeddingInput(const nlohmann::json& input, absl::string_view field,
                                bool token_arrays, EmbeddingRequest& r);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_EMBEDDING_REQUEST_H_

// File: examples/serve/src/embedding_call.h
//
// What every embeddings route (OpenAI's /v1/embeddings, Ollama's
// /api/embed and /api/embeddings) does once its body is parsed
// (embedding_request.h), whatever its API: the class, the inputs tokenized
// in the member's turn, each submitted as an embedding request
// (ServeEngine::SubmitEmbedding, so Hearth schedules it in the member's
// queue like any prefill), and all awaited.
//
// The class is what a generation's would be (a model alias, X-Hearth-Class,
// the key's rights), except that a call naming the served model with no
// X-Hearth-Class runs in the household's "embedding" class when there is
// one and the key may use it: a search index being built should not take
// the chat's place.
//
// Thread-safety: an HTTP handler's thread.

#ifndef HEARTH_SERVE_EMBEDDING_CALL_H_
#define HEARTH_SERVE_EMBEDDING_CALL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "embedding_request.h"
#include "prepare_generation.h"
#include "serve_context.h"

namespace hearth::serve {

struct EmbeddingAnswer {
  // One per input, in input order: the mean of the model's final hidden
  // states over the input's positions, scaled to unit length (as
  // llama-server and Ollama answer), ModelText::embedding_width() floats.
  std::vector<std::vector<float>> vectors;
  int64_t prompt_tokens = 0;
  // The id the client is shown for the call (its first input's request).
  std::string shown_id;
};

// Runs `request` for the admitted `call`. Errors carry the HTTP status the
// answer uses (openai_response.h): 400 for a bad input or `dimensions`, 403
// for a class the key may not use, 413-like OutOfRange for an input beyond
// the context (unless `truncate`), 429 with `*retry_after_s` set for a
// member's quota or queue, 504 when the member's turn does not come, and
// the first failed input's reason; the other inputs are then cancelled. A
// client that leaves cancels them all.
absl::StatusOr<EmbeddingAnswer> RunEmbeddings(const ServeContext& ctx, const CallHeaders& headers,
                                              AdmittedCall call, EmbeddingRequest request,
                                              int* retry_after_s);

// The base64 of `v`'s little-endian float32 bytes (OpenAI's
// encoding_format "base64").
std::string Base64Floats(const std::vector<float>& v);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_EMBEDDING_CALL_H_

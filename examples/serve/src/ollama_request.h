// File: examples/serve/src/ollama_request.h
//
// Parses and validates the bodies of Ollama's POST /api/chat and POST
// /api/generate into the `GenerationRequest` the OpenAI routes also make
// (openai_request.h), so that both APIs run the same way on the same
// scheduler. What each field becomes:
//
//   model          the served model or an alias; a ":latest" tag is the
//                  bare name (Ollama's clients add it)
//   messages       /api/chat: roles system, user, assistant, tool; content
//                  a string
//   prompt, system /api/generate: templated as a system and a user message;
//   raw            true: the prompt as is, no template (and no system)
//   stream         default true (Ollama's), NDJSON
//   options        temperature, top_p, top_k, min_p, seed (negative: drawn
//                  per request, as Ollama's -1), num_predict (-1, -2: as
//                  many tokens as the context leaves; absent: the server's
//                  default), stop, repeat_penalty, presence_penalty,
//                  frequency_penalty: the ranges of SamplingParams
//
// No messages (/api/chat) or no prompt and no system (/api/generate) is
// Ollama's way of asking for the model to be loaded: `load_only`, answered
// without generating.
//
// `format` "json" constrains the answer to one JSON object, as
// response_format json_object does, and a JSON schema object to that
// schema, as response_format json_schema does (grammar_field.h). A field or option the server does not implement (tools, images,
// think, templates, mirostat, the model-load options, keep_alive 0, ...)
// is accepted only at its neutral value and is InvalidArgument otherwise,
// naming it (options as "options.<name>"), as unsupported_fields.h does for
// OpenAI's; an option Ollama does not define is refused too. Other unknown
// top-level fields change nothing and are ignored. Never throws.
//
// Example:
//   absl::StatusOr<OllamaRequest> r = ParseOllamaChatRequest(
//       R"({"model": "tiny", "messages": [{"role": "user", "content": "hi"}]})",
//       /*context_length=*/8192);

#ifndef HEARTH_SERVE_OLLAMA_REQUEST_H_
#define HEARTH_SERVE_OLLAMA_REQUEST_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "embedding_request.h"
#include "openai_request.h"

namespace hearth::serve {

struct OllamaRequest {
  // chat: true unless /api/generate's raw; model without ":latest".
  GenerationRequest generation;
  // The model as the client sent it, which Ollama's answers repeat.
  std::string model_shown;
  bool load_only = false;
};

// `context_length` is the server's: options.num_ctx is accepted only when
// it asks for exactly that.
absl::StatusOr<OllamaRequest> ParseOllamaChatRequest(absl::string_view body,
                                                     int32_t context_length);
absl::StatusOr<OllamaRequest> ParseOllamaGenerateRequest(absl::string_view body,
                                                         int32_t context_length);

// POST /api/embed's body: model, input (a string or an array of strings),
// truncate (default true, as Ollama's), options (num_ctx only), keep_alive,
// dimensions.
absl::StatusOr<EmbeddingRequest> ParseOllamaEmbedRequest(absl::string_view body,
                                                         int32_t context_length);
// The older POST /api/embeddings: model, prompt (one string), options,
// keep_alive; never truncated.
absl::StatusOr<EmbeddingRequest> ParseOllamaEmbeddingsRequest(absl::string_view body,
                                                              int32_t context_length);

// POST /api/show's body: {"model": "<name>"} (or the older "name"); the
// name without a ":latest" tag. Its other fields (verbose) change nothing
// here: every answer is whole.
absl::StatusOr<std::string> ParseOllamaShowRequest(absl::string_view body);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_OLLAMA_REQUEST_H_

// File: examples/serve/src/ollama_response.h
//
// The JSON Ollama's API answers with, for what is true here: streamed
// records (NDJSON: one object a line, `done: false` with the text so far
// unsent), the final record (`done: true`, done_reason, token counts and
// durations in nanoseconds), the answer to a load request, the model
// entries of /api/tags, /api/show and /api/ps, and errors
// ({"error": "<message>"}, with the HTTP status and headers of
// openai_response.h's ErrorFor). Times are RFC 3339 in UTC.
//
// Thread-safety: plain functions.
//
// Example:
//   OllamaShape shape{.chat = true, .model = "tiny", .created_at = absl::Now()};
//   std::string line = NdjsonLine(OllamaChunk(shape, "Hel"));

#ifndef HEARTH_SERVE_OLLAMA_RESPONSE_H_
#define HEARTH_SERVE_OLLAMA_RESPONSE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "model_facts.h"
#include "nlohmann/json.hpp"
#include "openai_response.h"
#include "request_channel.h"

namespace hearth::serve {

struct OllamaShape {
  // /api/chat ("message") or /api/generate ("response").
  bool chat = false;
  // As the client sent it.
  std::string model;
  // When the call arrived: where total_duration starts. (Each record's
  // created_at is when it was written, as Ollama's.)
  absl::Time received;
};

// "2026-12-02T11:42:09.123456789Z".
std::string Rfc3339(absl::Time t);

// The records keep Ollama's field order (its Go structs'): model,
// created_at, the text, done, done_reason, the counts and durations.
// One streamed record with `text`.
nlohmann::ordered_json OllamaChunk(const OllamaShape& shape, absl::string_view text);
// The last record: `text` (a whole answer's, or "" when streamed), done,
// and the counts and durations of `end` (REQUIRES: end.status is OK).
// load_duration is 0: the one model is loaded before the server listens.
nlohmann::ordered_json OllamaFinal(const OllamaShape& shape, absl::string_view text,
                                   const RequestEnd& end);
// The answer to a load request: done, done_reason "load", no text.
nlohmann::ordered_json OllamaLoaded(const OllamaShape& shape);

// The compact JSON and a newline.
std::string NdjsonLine(const nlohmann::ordered_json& j);

// What Ollama says of one model, here for each served name (the model and
// its aliases share the facts).
struct OllamaModel {
  std::string name;
  const ModelFacts* facts = nullptr;
  // The server's context, prompt plus answer.
  int32_t context_length = 0;
};
// An /api/tags entry.
nlohmann::json OllamaTag(const OllamaModel& m);
// An /api/ps entry: the model stays loaded while the server runs, so no
// expires_at; its memory use is not measured, so no size_vram.
nlohmann::json OllamaRunning(const OllamaModel& m);
// The /api/show body; `defaults` are the request fields this server fixes
// (num_ctx, num_predict, repeat_last_n) as Ollama's "parameters" lines;
// the chat template is the GGUF's own (a Jinja text, under
// model_info["tokenizer.chat_template"]), not an Ollama Go template.
nlohmann::json OllamaShow(const OllamaModel& m, int32_t default_max_tokens,
                          absl::string_view chat_template);

// ErrorFor(status) with Ollama's body: {"error": message}.
HttpError OllamaErrorFor(const absl::Status& status, int retry_after_s = 0);
// `error`'s body in Ollama's shape (its message kept).
nlohmann::json OllamaErrorBody(const HttpError& error);
// Paths of Ollama's API (/api/...), whose errors take Ollama's shape, the
// early ones (401, 411, 413) and httplib's own (404) included.
bool IsOllamaPath(absl::string_view path);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_OLLAMA_RESPONSE_H_

// File: examples/serve/src/openai_response.h
//
// The JSON the OpenAI API answers with: whole completions, streamed chunks
// as server-sent events, `usage`, and errors ({"error": {message, type,
// param, code}}, param the request field an error_param.h payload names,
// else null) with the HTTP status each absl::Status code stands for.
//
// Generated text is whatever bytes the model produced; invalid UTF-8 is
// written as U+FFFD rather than failing the response.
//
// Thread-safety: plain functions.
//
// Example:
//   ResponseShape shape{.chat = true, .id = "chatcmpl-7", .created = 1700000000, .model = "m"};
//   std::string event = SseEvent(Chunk(shape, "Hel", std::nullopt));

#ifndef HEARTH_SERVE_OPENAI_RESPONSE_H_
#define HEARTH_SERVE_OPENAI_RESPONSE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {

struct ResponseShape {
  // chat.completion(.chunk) or text_completion.
  bool chat = false;
  std::string id;
  int64_t created = 0;
  std::string model;
};

nlohmann::json Usage(int32_t prompt_tokens, int32_t completion_tokens);
// With OpenAI's prompt_tokens_details.cached_tokens: the prompt tokens the
// prefix cache supplied (the member's own earlier turns, the chat
// template's shared beginning).
nlohmann::json Usage(int32_t prompt_tokens, int32_t completion_tokens,
                     int32_t cached_prompt_tokens);

// One choice of a whole answer. `logprobs`: the choice's (logprobs_json.h),
// null when none were asked for.
struct CompletionChoice {
  absl::string_view text;
  absl::string_view finish_reason;
  nlohmann::json logprobs = nullptr;
};

// A whole answer (stream: false) of `choices`, indexed in order.
nlohmann::json Completion(const ResponseShape& shape, const std::vector<CompletionChoice>& choices,
                          const nlohmann::json& usage);
// A whole answer of one choice.
nlohmann::json Completion(const ResponseShape& shape, absl::string_view text,
                          absl::string_view finish_reason, const nlohmann::json& usage,
                          const nlohmann::json& logprobs = nullptr);

// One streamed chunk of choice `index`: `text` so far unsent (chat chunks
// carry the role in each choice's first one) and, in its last, the finish
// reason; `logprobs` those of the tokens `text` completes.
nlohmann::json Chunk(const ResponseShape& shape, absl::string_view text,
                     std::optional<absl::string_view> finish_reason, bool first = false,
                     const nlohmann::json& logprobs = nullptr, int index = 0);

// The chunk with no choices and the usage (stream_options.include_usage).
nlohmann::json UsageChunk(const ResponseShape& shape, const nlohmann::json& usage);

// "data: <json>\n\n".
std::string SseEvent(const nlohmann::json& j);
// Compact JSON, invalid UTF-8 replaced.
std::string Dump(const nlohmann::json& j);
// The same, keys in the order they were added (records that mirror
// another server's field order: ollama_response.h).
std::string DumpOrdered(const nlohmann::ordered_json& j);

struct HttpError {
  int status = 500;
  nlohmann::json body;
  // Seconds until a retry may succeed, for 429 and 503; 0: no Retry-After
  // header. The header says at most kMaxRetryAfterS; a longer wait adds
  // `x-should-retry: false` (clients should not sleep that long in a call).
  int retry_after_s = 0;
  // More response headers (WWW-Authenticate, Connection).
  std::vector<std::pair<std::string, std::string>> headers;
};

inline constexpr int kMaxRetryAfterS = 60;

// The HTTP status and OpenAI error object for `status` (REQUIRES: not OK):
// InvalidArgument 400, Unauthenticated 401 (with a Bearer challenge),
// PermissionDenied 403, NotFound 404, OutOfRange 413 (too long for the
// context), ResourceExhausted 429, Unavailable 503, DeadlineExceeded 504,
// Cancelled 499, Unimplemented 501 (type "not_supported_error", as
// llama-server answers a route it does not serve), anything else 500.
HttpError ErrorFor(const absl::Status& status, int retry_after_s = 0);

// An OpenAI-shaped error for an HTTP status no absl code stands for (408,
// 411, 431, ...): type "invalid_request_error", `code` (empty: null).
HttpError HttpErrorOf(int http_status, absl::string_view message, absl::string_view code);

// The headers `error` is sent with: Retry-After (capped), x-should-retry,
// then error.headers.
std::vector<std::pair<std::string, std::string>> ErrorHeaders(const HttpError& error);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_OPENAI_RESPONSE_H_

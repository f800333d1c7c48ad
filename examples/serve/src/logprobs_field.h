// File: examples/serve/src/logprobs_field.h
//
// Reads the log-probability fields, which the two endpoints spell
// differently (OpenAI's): a chat asks with `"logprobs": true` and lists
// `top_logprobs` (0..20) alternatives per token; a completion asks with
// `"logprobs": n`, n (0..5) the alternatives. Either way the result is
// GenerationRequest::logprobs: absent, or the number of alternatives.
// `top_logprobs` on a completion is refused (it is a chat field), unless 0.
//
// Example:
//   std::optional<int32_t> n;
//   absl::Status s = ReadChatLogprobs(body, n);  // body: a JSON object

#ifndef HEARTH_SERVE_LOGPROBS_FIELD_H_
#define HEARTH_SERVE_LOGPROBS_FIELD_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {

// The most alternatives OpenAI lists per token, per endpoint.
inline constexpr int32_t kMaxChatTopLogprobs = 20;
inline constexpr int32_t kMaxCompletionLogprobs = 5;

// REQUIRES: `body` is a JSON object. InvalidArgument naming the field.
absl::Status ReadChatLogprobs(const nlohmann::json& body, std::optional<int32_t>& out);
absl::Status ReadCompletionLogprobs(const nlohmann::json& body, std::optional<int32_t>& out);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_LOGPROBS_FIELD_H_

// File: examples/serve/src/token_logprobs.h
//
// A generated token's log probability and its likeliest alternatives, as
// OpenAI's logprobs report them: the log-softmax of the model's raw logits
// at that position, before the logit bias, the grammar, the penalties or
// the temperature touched them (llama-server's default,
// post_sampling_probs false). Computed on the engine thread only for
// requests that asked (one pass over the vocabulary, plus a partial sort
// for the alternatives).
//
// Thread-safety: plain functions and values.
//
// Example:
//   LogprobsAt(logits, sampled, /*top_n=*/5, scratch, ids);
//   // ids.logprob <= 0; ids.top: the 5 likeliest, likeliest first

#ifndef HEARTH_SERVE_TOKEN_LOGPROBS_H_
#define HEARTH_SERVE_TOKEN_LOGPROBS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace hearth::serve {

// OpenAI's stand-in for log(0) (a token the model gives no chance): JSON
// has no -Infinity.
inline constexpr float kLogprobFloor = -9999.0f;

// By token id, on the engine thread.
struct LogprobIds {
  int32_t token = 0;
  float logprob = 0;
  // (token, logprob), likeliest first; ties by lower id.
  std::vector<std::pair<int32_t, float>> top;
};

// By text, for the answer.
struct TopLogprob {
  std::string token;
  float logprob = 0;
};
struct TokenLogprob {
  // The token's bytes (possibly part of a UTF-8 character).
  std::string token;
  float logprob = 0;
  std::vector<TopLogprob> top;
};

// Fills `out` for `token` and the `top_n` likeliest tokens of `logits`.
// Non-finite logits count as impossible; logprobs are in
// [kLogprobFloor, 0]. `scratch` is the caller's, reused across calls.
// REQUIRES: 0 <= token < logits.size(); top_n >= 0.
void LogprobsAt(absl::Span<const float> logits, int32_t token, int32_t top_n,
                std::vector<int32_t>& scratch, LogprobIds& out);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_TOKEN_LOGPROBS_H_

// File: examples/serve/src/logit_bias_field.h
//
// Reads OpenAI's `logit_bias`: an object from token id (a decimal string,
// as JSON keys must be) to a number in [-100, 100] added to that token's
// logit before sampling; -100 bans the token outright (token_sampler.h).
// The ids are checked against the served model's vocabulary once it is
// known (CheckLogitBiasTokens), before the request is queued.
//
// llama-server's other spellings (an array of [id, bias] pairs, token text
// as keys) are refused, so a client never gets a bias on the wrong token.
//
// Example:
//   std::vector<TokenBias> bias;
//   absl::Status s = ReadLogitBias(body, bias);         // {"logit_bias": {"42": -100}}
//   s = CheckLogitBiasTokens(bias, text.vocab_size());

#ifndef HEARTH_SERVE_LOGIT_BIAS_FIELD_H_
#define HEARTH_SERVE_LOGIT_BIAS_FIELD_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"
#include "openai_request.h"

namespace hearth::serve {

// More entries than this is InvalidArgument: each costs the sampler a
// write per token, and no client needs more.
inline constexpr size_t kMaxLogitBiasEntries = 1024;

// REQUIRES: `body` is a JSON object. Absent, null or {}: `out` empty.
absl::Status ReadLogitBias(const nlohmann::json& body, std::vector<TokenBias>& out);

// InvalidArgument (param logit_bias) for an id outside [0, n_vocab).
absl::Status CheckLogitBiasTokens(absl::Span<const TokenBias> bias, int32_t n_vocab);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_LOGIT_BIAS_FIELD_H_

// File: examples/serve/src/logprobs_json.h
//
// OpenAI's two shapes for a choice's `logprobs`. Chat: {"content": [{token,
// logprob, bytes, top_logprobs: [{token, logprob, bytes}]}], "refusal":
// null}. Completions (the legacy shape): {tokens, token_logprobs,
// top_logprobs: [{text: logprob}] (the n likeliest plus the sampled token,
// so up to n + 1), text_offset}, text_offset counting bytes of the
// answer's text from `first_offset` (what earlier chunks carried).
//
// Thread-safety: plain functions.
//
// Example:
//   nlohmann::json j = ChatLogprobs(entries);

#ifndef HEARTH_SERVE_LOGPROBS_JSON_H_
#define HEARTH_SERVE_LOGPROBS_JSON_H_

#include <cstddef>
#include <vector>

#include "nlohmann/json.hpp"
#include "token_logprobs.h"

namespace hearth::serve {

nlohmann::json ChatLogprobs(const std::vector<TokenLogprob>& entries);
nlohmann::json CompletionLogprobs(const std::vector<TokenLogprob>& entries, size_t first_offset);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_LOGPROBS_JSON_H_

// File: examples/serve/src/prompt_bound.h
//
// The cheap check before tokenisation: a prompt whose bytes alone prove it
// cannot fit the context is refused at once, without tokenising it.
//
// A vocabulary that puts every byte of a text into some token, none of
// which stands for more than M bytes (ModelText::max_token_bytes()), gives
// a text of B bytes at least ceil(B / M) tokens. The prompt needs room in
// the context for itself and its answer (max_tokens when given, else at
// least one token), so a prompt of more than (context - answer) * M bytes
// cannot fit. The check is exact on the text the tokenizer will see (the
// rendered chat, the completion prompt); it never refuses a prompt that
// would fit, and lets through some that will not (the tokenizer's count
// decides those).
//
// Thread-safety: pure functions.
//
// Example:
//   PromptBudget budget{/*context=*/8192, text.max_token_bytes(), request.max_tokens};
//   if (absl::Status s = CheckPromptBytes(prompt.size(), budget); !s.ok()) return s;  // 413

#ifndef HEARTH_SERVE_PROMPT_BOUND_H_
#define HEARTH_SERVE_PROMPT_BOUND_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"

namespace hearth::serve {

struct PromptBudget {
  // Tokens of prompt plus answer the server holds per request, >= 1.
  int32_t context = 0;
  // ModelText::max_token_bytes(); 0: no bound, every prompt passes.
  int32_t max_token_bytes = 0;
  // The answer's budget when the request names one (>= 1).
  std::optional<int32_t> max_tokens;
};

// The fewest tokens `bytes` bytes of text give: ceil(bytes / max_token_bytes),
// 0 when max_token_bytes <= 0 (no bound) or bytes <= 0.
int64_t MinTokensForBytes(int64_t bytes, int32_t max_token_bytes);

// The most bytes of prompt that may fit `budget`; INT64_MAX without a bound.
int64_t MaxPromptBytes(const PromptBudget& budget);

// OK when a prompt of `prompt_bytes` bytes may fit `budget`. Otherwise
// OutOfRange (HTTP 413, context_length_exceeded) saying the prompt's bytes,
// the tokens they give at least, the context and the most bytes that fit.
absl::Status CheckPromptBytes(int64_t prompt_bytes, const PromptBudget& budget);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_PROMPT_BOUND_H_

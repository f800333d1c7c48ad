#include "prompt_bound.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace hearth::serve {
namespace {

// Tokens the answer needs: max_tokens, or one.
int64_t AnswerTokens(const PromptBudget& budget) {
  return budget.max_tokens ? std::max<int64_t>(1, *budget.max_tokens) : 1;
}

}  // namespace

int64_t MinTokensForBytes(int64_t bytes, int32_t max_token_bytes) {
  if (max_token_bytes <= 0 || bytes <= 0) return 0;
  return bytes / max_token_bytes + (bytes % max_token_bytes != 0 ? 1 : 0);
}

int64_t MaxPromptBytes(const PromptBudget& budget) {
  if (budget.max_token_bytes <= 0) return std::numeric_limits<int64_t>::max();
  const int64_t room = std::max<int64_t>(0, int64_t{budget.context} - AnswerTokens(budget));
  // room < 2^31 and max_token_bytes < 2^31: the product fits.
  return room * budget.max_token_bytes;
}

absl::Status CheckPromptBytes(int64_t prompt_bytes, const PromptBudget& budget) {
  if (prompt_bytes <= MaxPromptBytes(budget)) return absl::OkStatus();
  const std::string answer =
      budget.max_tokens ? absl::StrCat("max_tokens (", *budget.max_tokens, ")")
                        : std::string("at least one token of answer");
  return absl::OutOfRangeError(absl::StrCat(
      "the prompt is ", prompt_bytes, " bytes, so at least ",
      MinTokensForBytes(prompt_bytes, budget.max_token_bytes), " tokens (no token of this model ",
      "stands for more than ", budget.max_token_bytes, " bytes); with ", answer,
      " that exceeds this server's context of ", budget.context, " tokens: at most ",
      MaxPromptBytes(budget), " bytes of prompt can fit"));
}

}  // namespace hearth::serve

// File: src/scheduler/token_budget.cc

#include <algorithm>

#include "scheduler/scheduler_state.h"

namespace hearth::internal {

TokenBudget::TokenBudget(const StepTimeModel& host_model,
                         const std::vector<WorkClassConfig>& classes)
    : fit_(host_model) {
  if (std::any_of(classes.begin(), classes.end(), [](const WorkClassConfig& c) {
        return c.tpot_slo != absl::InfiniteDuration();
      })) {
    for (const WorkClassConfig& c : classes) class_tpot_.push_back(c.tpot_slo);
  }
}

void TokenBudget::set_prefill_rules(PrefillRules rules) {
  rules.background_tokens = std::max(0, rules.background_tokens);
  prefill_rules_ = rules;
}

void TokenBudget::StartStep(int32_t decoding, int32_t max_batched_tokens, int32_t block_size) {
  // Every decode still runs, and prefill still moves by a block.
  const int32_t floor = std::min(max_batched_tokens, decoding + block_size);
  left_ = fit_.TokensFor(tpot_step_allowance_, max_batched_tokens, floor);
  background_left_ = decoding == 0 ? INT32_MAX : prefill_rules_.background_tokens;
}

}  // namespace hearth::internal

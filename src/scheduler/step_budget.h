// File: src/scheduler/step_budget.h
//
// StepBudget: the TPOT-aware token budget of a step (Sarathi-Serve's idea).
// A step's time grows with the tokens it batches; every running sequence
// waits for the whole step, so a step long with prefill chunks stretches
// each decoding request's time per output token. Given how long the next
// step may last and keep every decoding request with a TPOT target on pace
// (WorkClassConfig::tpot_slo; Scheduler::Impl::TpotStepAllowance), the
// budget is the most tokens whose predicted step time fits.
//
// The prediction is a line, fixed + per_token x tokens: the host's
// (SchedulerOptions::step_time_model) or, without one, a least-squares fit
// of the steps' measured times (StepOutcome::completed_at minus the plan's
// now) against their batched tokens, exponentially weighted so that it
// follows the engine. No allocation. Engine thread only.

#ifndef HEARTH_SRC_SCHEDULER_STEP_BUDGET_H_
#define HEARTH_SRC_SCHEDULER_STEP_BUDGET_H_

#include <cstdint>

#include "absl/time/time.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth::internal {

class StepBudget {
 public:
  explicit StepBudget(const StepTimeModel& host_model) : host_(host_model) {}

  // One completed step: `tokens` batched, `took` from plan to completion.
  void Observe(int32_t tokens, absl::Duration took);

  // The budget for a step that may last `allowance` (InfiniteDuration: no
  // limit): at most `max_tokens`, at least `floor_tokens`; `max_tokens` while
  // no prediction is known.
  int32_t TokensFor(absl::Duration allowance, int32_t max_tokens, int32_t floor_tokens) const;

 private:
  // The line in use, in seconds; false while none is known.
  bool Line(double* fixed_s, double* per_token_s) const;

  StepTimeModel host_;
  // Exponentially weighted sums of the observations (x: tokens, y: seconds).
  double w_ = 0, x_ = 0, y_ = 0, xx_ = 0, xy_ = 0;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_STEP_BUDGET_H_

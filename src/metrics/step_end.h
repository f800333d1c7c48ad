// File: src/metrics/step_end.h
//
// When a step ended, as the metrics sinks see it. Not part of the public API.

#ifndef HEARTH_METRICS_STEP_END_H_
#define HEARTH_METRICS_STEP_END_H_

#include <algorithm>

#include "absl/time/time.h"
#include "hearth/common/clock.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth::metrics_internal {

// The step's end: the engine's completed_at, else the clock, else its
// start; never before `previous_end` (the step before it), as the
// scheduler applies it (StepOutcome::completed_at).
inline absl::Time StepEnd(const StepPlan& plan, const StepOutcome& outcome,
                          const Clock* clock, absl::Time previous_end) {
  absl::Time end = plan.now;
  if (outcome.completed_at != absl::InfinitePast()) {
    end = std::max(outcome.completed_at, plan.now);
  } else if (clock != nullptr) {
    end = std::max(clock->Now(), plan.now);
  }
  return std::max(end, previous_end);
}

}  // namespace hearth::metrics_internal

#endif  // HEARTH_METRICS_STEP_END_H_

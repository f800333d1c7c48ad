// File: hearth/exec/step_executor.h
//
// `StepExecutor` is the engine side of the iteration contract: it runs one
// StepPlan (block copies, then the batched forward pass over the scheduled
// positions, reading and writing KV through each sequence's block table) and
// reports a StepOutcome. Hosts with their own kernels implement it, or skip
// it and drive Plan/Complete directly.
//
// EngineLoop (engine_loop.h) drives an executor: Plan -> Execute -> Complete
// with the one failure policy every host shares.
//
// Example (an executor of one's own):
//   class MyExecutor : public hearth::StepExecutor {
//     absl::Status Execute(const hearth::StepPlan& plan,
//                          hearth::StepOutcome* outcome) override {
//       hearth::StartStepOutcome(plan, outcome);   // see step_outcome_fill.h
//       // ... run plan.sequences; one outcome entry each, in plan order ...
//       return absl::OkStatus();
//     }
//   };

#ifndef HEARTH_EXEC_STEP_EXECUTOR_H_
#define HEARTH_EXEC_STEP_EXECUTOR_H_

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth {

class StepExecutor {
 public:
  virtual ~StepExecutor() = default;
  // Runs `plan` and fills `outcome` (cleared by the callee) with one entry per
  // planned sequence, in plan order. A non-OK status means the whole step
  // failed; per-sequence failures go in SequenceOutcome::error instead.
  virtual absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) = 0;
};

// ExecuteStep()
//
// The engine half of EngineLoop's iteration: resets `outcome` (StartStepOutcome), runs `plan` on `executor`, and
// when the executor fails the whole step replaces the outcome with one failed
// entry per planned sequence (FailWholeStep), so that Complete(*outcome)
// loses no request. Returns the executor's status.
absl::Status ExecuteStep(StepExecutor& executor, const StepPlan& plan,
                         StepOutcome* outcome);

}  // namespace hearth

#endif  // HEARTH_EXEC_STEP_EXECUTOR_H_

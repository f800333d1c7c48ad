#include "hearth/exec/step_executor.h"

#include "hearth/exec/step_outcome_fill.h"

namespace hearth {

absl::Status ExecuteStep(StepExecutor& executor, const StepPlan& plan,
                         StepOutcome* outcome) {
  StartStepOutcome(plan, outcome);
  absl::Status executed = executor.Execute(plan, outcome);
  // Executors answer the plan they ran; the step number is not theirs to
  // choose.
  outcome->step = plan.step;
  if (!executed.ok()) FailWholeStep(plan, executed, outcome);
  return executed;
}

absl::Status RunIteration(Scheduler& scheduler, StepExecutor& executor,
                          absl::Time now) {
  absl::StatusOr<const StepPlan*> plan = scheduler.Plan(now);
  if (!plan.ok()) return plan.status();
  // One outcome buffer per thread keeps hosts that call this in a loop from
  // allocating every step.
  thread_local StepOutcome outcome;
  absl::Status executed = ExecuteStep(executor, **plan, &outcome);
  absl::Status completed = scheduler.Complete(outcome);
  // A failed step's sequences are completed above; the executor's error is
  // the one the host needs to see.
  if (!executed.ok()) return executed;
  return completed;
}

}  // namespace hearth

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

}  // namespace hearth

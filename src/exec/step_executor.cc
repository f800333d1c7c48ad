#include "hearth/exec/step_executor.h"

#include "absl/strings/str_cat.h"

namespace hearth {

absl::Status RunIteration(Scheduler& scheduler, StepExecutor& executor,
                          absl::Time now) {
  absl::StatusOr<const StepPlan*> plan = scheduler.Plan(now);
  if (!plan.ok()) return plan.status();
  // One outcome buffer per thread keeps hosts that call this in a loop from
  // allocating every step.
  thread_local StepOutcome outcome;
  outcome.sequences.clear();
  outcome.completed_at = absl::InfinitePast();
  absl::Status executed = executor.Execute(**plan, &outcome);
  outcome.step = (*plan)->step;
  if (!executed.ok()) {
    // Fail every planned sequence with the executor's message so that no
    // request is silently lost, then report the executor's error.
    outcome.sequences.clear();
    outcome.completed_at = absl::InfinitePast();
    for (const ScheduledSequence& s : (*plan)->sequences) {
      SequenceOutcome& o = outcome.sequences.emplace_back();
      o.id = s.id;
      o.error = absl::StrCat("step failed: ", executed.message());
    }
    absl::Status completed = scheduler.Complete(outcome);
    (void)completed;
    return executed;
  }
  return scheduler.Complete(outcome);
}

}  // namespace hearth

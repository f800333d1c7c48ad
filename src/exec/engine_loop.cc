// The one engine loop and its failure policy (see engine_loop.h).

#include "hearth/exec/engine_loop.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "exec/step_worker.h"
#include "hearth/exec/step_outcome_fill.h"

namespace hearth {

namespace {

EngineHooks& NoHooks() {
  static EngineHooks none;
  return none;
}

// The outcome of a step whose own outcome Complete refused, built from the
// plan alone: every sequence and every model load failed with `why`.
void FailRefusedStep(const StepPlan& plan, const absl::Status& why, StepOutcome* outcome) {
  FailWholeStep(plan, why, outcome);
  outcome->draft_ids.clear();
  outcome->failed_loads.clear();
  for (const ModelCommand& c : plan.model_commands) {
    if (c.kind != ModelCommandKind::kLoad) continue;
    outcome->failed_loads.push_back({c.model, absl::StrCat("step failed: ", why.message())});
  }
}

}  // namespace

EngineLoop::EngineLoop(Scheduler& scheduler, StepExecutor& executor, EngineLoopOptions options)
    : scheduler_(scheduler), executor_(executor) {
  if (options.overlap && scheduler_.options().overlap_planning) {
    worker_ = std::make_unique<internal::StepWorker>(executor_);
  }
}

// The worker finishes a step it runs before the executor may go.
EngineLoop::~EngineLoop() { worker_.reset(); }

absl::Status EngineLoop::Step(absl::Time now) { return Step(now, NoHooks()); }

absl::Status EngineLoop::Step(absl::Time now, EngineHooks& hooks) {
  if (!broken_.ok()) return broken_;
  last_ = StepSummary{};
  absl::StatusOr<const StepPlan*> planned = scheduler_.Plan(now);
  if (!planned.ok()) return planned.status();
  const StepPlan& plan = **planned;
  last_.planned = true;
  last_.step = plan.step;
  last_.sequences = static_cast<int32_t>(plan.sequences.size());
  hooks.OnPlanned(plan);
  if (worker_ != nullptr) return StepOverlapped(plan, hooks);
  StepOutcome& outcome = outcomes_[0];
  const absl::Status executed = ExecuteStep(executor_, plan, &outcome);
  hooks.OnExecuted(plan, executed, outcome);
  return CompleteStep(plan, executed, outcome, hooks);
}

absl::Status EngineLoop::StepOverlapped(const StepPlan& next, EngineHooks& hooks) {
  // `next` was planned while the step in flight executed; that step is
  // completed once the worker is done, while `next` executes.
  const StepPlan* done = std::exchange(in_flight_, &next);
  const int done_outcome = executing_;
  absl::Status executed;
  if (done != nullptr) {
    executed = worker_->Wait();
    hooks.OnExecuted(*done, executed, outcomes_[done_outcome]);
  }
  executing_ = 1 - done_outcome;
  worker_->Launch(next, &outcomes_[executing_]);
  if (done == nullptr) return absl::OkStatus();
  return CompleteStep(*done, executed, outcomes_[done_outcome], hooks);
}

absl::Status EngineLoop::Finish(EngineHooks& hooks) {
  if (!broken_.ok()) return broken_;
  if (in_flight_ == nullptr) return absl::OkStatus();
  last_ = StepSummary{};
  const StepPlan* done = std::exchange(in_flight_, nullptr);
  StepOutcome& outcome = outcomes_[executing_];
  const absl::Status executed = worker_->Wait();
  hooks.OnExecuted(*done, executed, outcome);
  return CompleteStep(*done, executed, outcome, hooks);
}

absl::Status EngineLoop::CompleteStep(const StepPlan& plan, const absl::Status& executed,
                                      StepOutcome& outcome, EngineHooks& hooks) {
  last_.executor_failed = !executed.ok();
  // The plan is valid only until it is completed.
  const uint64_t step = plan.step;
  const absl::Status completed = scheduler_.Complete(outcome);
  if (completed.ok()) {
    hooks.OnCompleted(outcome);
    return executed;
  }
  // Complete applied nothing and the plan is still outstanding: fail the
  // step so that its requests are retried or end, instead of waiting on a
  // plan no outcome will ever match.
  last_.outcome_refused = true;
  FailRefusedStep(plan, completed, &outcome);
  if (absl::Status again = scheduler_.Complete(outcome); !again.ok()) {
    broken_ = absl::InternalError(absl::StrCat(
        "the engine loop stopped: Complete refused the failed outcome of step ", step, " (",
        again.message(), ") after refusing its outcome (", completed.message(), ")"));
    return broken_;
  }
  hooks.OnCompleted(outcome);
  return absl::Status(completed.code(),
                      absl::StrCat("Complete refused the outcome of step ", step,
                                   "; its sequences failed: ", completed.message()));
}

}  // namespace hearth

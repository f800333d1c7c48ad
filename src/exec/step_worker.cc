#include "exec/step_worker.h"

namespace hearth::internal {

StepWorker::StepWorker(StepExecutor& executor) : executor_(executor) {
  thread_ = std::thread([this] { Run(); });
}

StepWorker::~StepWorker() {
  {
    absl::MutexLock lock(&mu_);
    // A step in progress finishes first: the executor is not interrupted.
    mu_.Await(absl::Condition(
        +[](StepWorker* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) { return w->plan_ == nullptr; },
        this));
    stop_ = true;
  }
  thread_.join();
}

void StepWorker::Launch(const StepPlan& plan, StepOutcome* outcome) {
  absl::MutexLock lock(&mu_);
  plan_ = &plan;
  outcome_ = outcome;
  done_ = false;
}

absl::Status StepWorker::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&done_));
  done_ = false;
  return status_;
}

void StepWorker::Run() {
  while (true) {
    const StepPlan* plan;
    StepOutcome* outcome;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](StepWorker* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) {
            return w->stop_ || w->plan_ != nullptr;
          },
          this));
      if (plan_ == nullptr) return;  // stopping
      plan = plan_;
      outcome = outcome_;
    }
    absl::Status status = ExecuteStep(executor_, *plan, outcome);
    absl::MutexLock lock(&mu_);
    status_ = std::move(status);
    plan_ = nullptr;
    done_ = true;
  }
}

}  // namespace hearth::internal

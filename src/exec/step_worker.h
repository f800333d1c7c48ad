// File: src/exec/step_worker.h
//
// `StepWorker` runs a StepExecutor's Execute() on a thread of its own, so
// that EngineLoop can plan the next step (and complete the one before)
// while the executor runs: overlapped planning
// (SchedulerOptions::overlap_planning), with ExecuteStep's failure path.
// One step at a time: Launch, then Wait for it, then the next Launch.
//
// Thread-safety: Launch and Wait belong to one thread (the engine's). The
// executor is used only by the worker between a Launch and its Wait.

#ifndef HEARTH_EXEC_STEP_WORKER_H_
#define HEARTH_EXEC_STEP_WORKER_H_

#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "hearth/exec/step_executor.h"

namespace hearth::internal {

class StepWorker {
 public:
  // `executor` is not owned and must outlive the worker.
  explicit StepWorker(StepExecutor& executor);
  // Waits for a step in progress, then stops the thread.
  ~StepWorker();
  StepWorker(const StepWorker&) = delete;
  StepWorker& operator=(const StepWorker&) = delete;

  // Starts executing `plan` into `outcome`; both must stay valid until
  // Wait() returns. At most one step is launched and not waited for.
  void Launch(const StepPlan& plan, StepOutcome* outcome) ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until the launched step ran; returns Execute's status.
  absl::Status Wait() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);

  StepExecutor& executor_;
  absl::Mutex mu_;
  const StepPlan* plan_ ABSL_GUARDED_BY(mu_) = nullptr;
  StepOutcome* outcome_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace hearth::internal

#endif  // HEARTH_EXEC_STEP_WORKER_H_

// File: hearth/exec/engine_loop.h
//
// `EngineLoop` is the engine thread's iteration, Plan(now) -> Execute ->
// Complete(outcome), written once for every host: the simulator, the
// llama.cpp engine, hearth-serve, the host_engine example and the bench
// drivers. What hosts differ in comes in through `EngineHooks` (work between
// the calls) and the `now` each Step is given; what they must not differ in,
// the answer to a failure, is the loop's:
//
// Failure policy (one rule for every host):
//   (a) Plan fails (a plan still outstanding, time going backwards): nothing
//       was planned, executed or completed; Step returns Plan's status and
//       no hook runs after OnPlanned's place. Calling Step again is safe.
//   (b) The executor fails the whole step: the outcome becomes one failed
//       entry per planned sequence (FailWholeStep), which Complete applies,
//       so each request is retried up to its class's max_retries, then ends
//       as failed with the executor's message. Step returns the executor's
//       status.
//   (c) Complete refuses the outcome (it does not match the plan: a bug in
//       the executor or a hook): Complete applied nothing, and nothing in
//       the outcome can be trusted, so the loop completes the step again
//       from the plan alone: every sequence failed with the refusal's
//       message (FailWholeStep) and every model load of the plan failed.
//       No request waits on a plan that never completes. Step returns the
//       refusal's code with "Complete refused the outcome of step N" in
//       front of its message. Should Complete refuse even that, the
//       scheduler is broken: the plan stays outstanding and every later Step
//       or Finish returns the same Internal error without calling the
//       scheduler.
// After (b) or (c) the scheduler is consistent and the loop may go on; a
// host decides whether an error ends its run (a server goes on, a
// deterministic run stops). last_step() says which case happened.
//
// Overlapped planning: when the host asks for it (EngineLoopOptions) and the
// scheduler's options allow it (overlap_planning), the loop runs the
// executor on a worker thread of its own. Step(now) then
// plans step N+1 while step N executes, launches N+1 and completes N; the
// hooks for step N run on the calling thread after N+1 was planned.
// Finish() completes the step still executing. Without overlap, Finish()
// does nothing.
//
// Steady state allocates nothing: the loop owns its outcome buffers and the
// hooks are virtual calls.
//
// Thread-safety: one thread (the engine's) calls Step and Finish. The
// scheduler's engine-thread calls belong to that thread while the loop is
// used; with overlap, the executor belongs to the worker from a launch until
// the Step or Finish that completes it.
//
// Example:
//   #include <algorithm>
//   class Kernels : public hearth::StepExecutor {
//     absl::Status Execute(const hearth::StepPlan& p, hearth::StepOutcome* o) override {
//       hearth::StartStepOutcome(p, o);  // ... then run p.sequences on the device ...
//       return absl::OkStatus();
//     }
//   };
//   class Host : public hearth::EngineHooks {
//     void OnExecuted(const hearth::StepPlan& p, const absl::Status&,
//                     hearth::StepOutcome& o) override {
//       o.completed_at = std::max(p.now, absl::Now());
//     }
//   };
//   Kernels kernels;
//   hearth::EngineLoop loop(scheduler, kernels);
//   Host host;
//   while (serving) {
//     if (absl::Status s = loop.Step(host_clock.Now(), host); !s.ok()) return s;
//     if (loop.last_step().sequences == 0) {
//       scheduler.WaitForWork(scheduler.NextEventTime() - host_clock.Now());
//     }
//   }

#ifndef HEARTH_EXEC_ENGINE_LOOP_H_
#define HEARTH_EXEC_ENGINE_LOOP_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/exec/step_executor.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth {

namespace internal {
class StepWorker;
}  // namespace internal

// EngineHooks
//
// Where a host's work goes between the loop's calls. Every hook runs on the
// thread that called Step (or Finish) and does nothing by default.
class EngineHooks {
 public:
  virtual ~EngineHooks() = default;
  // EngineHooks::OnPlanned()
  //
  // Plan returned `plan`, which is about to execute: adopt what the plan
  // may name (requests submitted since), note what it schedules.
  virtual void OnPlanned(const StepPlan& plan) { (void)plan; }
  // EngineHooks::OnExecuted()
  //
  // The executor ran `plan`: `executed` is its status, and on failure
  // `outcome` is already FailWholeStep's. Complete reads `outcome` next, so
  // this is where a host stamps outcome.completed_at from its clock and
  // edits the entries it owns (tokens it sampled, finishes it decided).
  virtual void OnExecuted(const StepPlan& plan, const absl::Status& executed,
                          StepOutcome& outcome) {
    (void)plan, (void)executed, (void)outcome;
  }
  // EngineHooks::OnCompleted()
  //
  // Complete accepted `outcome`: the one given to OnExecuted, or after a
  // refusal (policy (c)) its failed replacement. Results of requests that
  // ended are ready for Scheduler::DrainResults. The plan is gone (it lives
  // until its Complete): copy in OnExecuted what is needed here.
  virtual void OnCompleted(const StepOutcome& outcome) { (void)outcome; }
};

// What the latest Step (or Finish) did, for the host's idle and error
// handling. With overlap, the plan fields describe the step just planned and
// the failure fields the step just completed.
struct StepSummary {
  // Plan succeeded; step and sequences describe that plan.
  bool planned = false;
  uint64_t step = 0;
  int32_t sequences = 0;
  // The executor failed the step it completed (policy (b)).
  bool executor_failed = false;
  // Complete refused the step's outcome (policy (c)).
  bool outcome_refused = false;
};

struct EngineLoopOptions {
  // Plan step N+1 while step N executes on the loop's worker thread. Only
  // when the scheduler's options set overlap_planning; ignored otherwise.
  // A host whose time is simulated keeps it off: its clock moves by the
  // step it just completed.
  bool overlap = false;
};

class EngineLoop {
 public:
  // Neither `scheduler` nor `executor` is owned; both must outlive the
  // loop. With overlap, the loop starts its worker thread here.
  EngineLoop(Scheduler& scheduler, StepExecutor& executor, EngineLoopOptions options = {});
  // Waits for a step still executing (it is not completed).
  ~EngineLoop();
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  // EngineLoop::Step()
  //
  // One iteration at time `now` with the failure policy above. Returns OK,
  // Plan's status (a), the executor's status (b), the refusal (c), or
  // Internal once the scheduler refused a failed outcome.
  absl::Status Step(absl::Time now, EngineHooks& hooks);
  absl::Status Step(absl::Time now);

  // EngineLoop::Finish()
  //
  // With overlap, waits for the step executing and completes it (hooks and
  // policy as in Step); OK when none is. Call before the scheduler stops
  // being driven, so the last plan does not stay outstanding.
  absl::Status Finish(EngineHooks& hooks);

  // The latest Step's (or Finish's) summary.
  const StepSummary& last_step() const { return last_; }
  // Whether a launched step has not been completed yet (overlap only).
  bool step_in_flight() const { return in_flight_ != nullptr; }

 private:
  absl::Status StepOverlapped(const StepPlan& next, EngineHooks& hooks);
  // Complete with policies (b) and (c); runs OnCompleted.
  absl::Status CompleteStep(const StepPlan& plan, const absl::Status& executed,
                            StepOutcome& outcome, EngineHooks& hooks);

  Scheduler& scheduler_;
  StepExecutor& executor_;
  std::unique_ptr<internal::StepWorker> worker_;
  // Two with overlap: the step executing and the one being completed.
  StepOutcome outcomes_[2];
  int executing_ = 0;
  const StepPlan* in_flight_ = nullptr;
  StepSummary last_;
  // Set once the scheduler refused a failed outcome.
  absl::Status broken_;
};

}  // namespace hearth

#endif  // HEARTH_EXEC_ENGINE_LOOP_H_

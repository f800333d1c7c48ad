// File: bench/fidelity/replay_driver.h
//
// One loop for both sides of the fidelity replay. Drive() submits each
// request of the list when its arrival time has come, plans, executes,
// completes and collects results; a ReplayClock decides where time comes
// from:
//   WallClock    real time around a real executor (llama.cpp, CUDA);
//   PricedClock  the simulator's: each step lasts what the
//                SimulatedExecutor's cost model says.
// With the same SchedulerOptions and list, the two runs differ only in step
// durations, so the comparison measures the cost model (plus whatever the
// real engine does that no model of a step sees). No llama.cpp or CUDA
// here: the llama.cpp and GPU replay programs share it.
//
// Example:
//   SchedulerOptions o = *ReplaySchedulerOptions("household");
//   ... size o for the real executor ...
//   WallClock wall;
//   absl::StatusOr<RunRecord> real = Drive(*scheduler, executor, wall, list, nullptr, {});
//   absl::StatusOr<RunRecord> sim = RunSimulated(o, cost, list, real->output_tokens);
//   absl::StatusOr<PolicyOutcome> r = CompareAndReport("household", list, *real, *sim, cost, dir);

#ifndef HEARTH_BENCH_FIDELITY_REPLAY_DRIVER_H_
#define HEARTH_BENCH_FIDELITY_REPLAY_DRIVER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/fidelity/fidelity_stats.h"
#include "bench/fidelity/replay_workload.h"
#include "hearth/exec/step_executor.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/sim/cost_model.h"
#include "hearth/sim/simulated_executor.h"

namespace hearth::fidelity {

struct StepRecord {
  double prefill = 0, decodes = 0, context = 0;  // P, D, K as the profile sees them
  double seconds = 0;                            // measured (real) or priced (simulated)
  std::vector<SequenceWork> work;
};

struct RunRecord {
  std::vector<RequestLatency> requests;
  std::vector<int32_t> output_tokens;  // by request index
  std::vector<StepRecord> steps;       // steps that ran sequences
  double seconds = 0;                  // start to the last request's end
  uint64_t preemptions = 0;
};

// Where time comes from.
class ReplayClock {
 public:
  virtual ~ReplayClock() = default;
  virtual absl::Time Now() = 0;
  // Called after a step started at `started` ran; stamps
  // outcome.completed_at and returns the step's duration in seconds.
  virtual double StepDone(absl::Time started, StepOutcome& outcome) = 0;
  // Nothing to run: wait (or jump) towards `t`.
  virtual void WaitUntil(absl::Time t) = 0;
};

class WallClock : public ReplayClock {
 public:
  absl::Time Now() override;
  double StepDone(absl::Time started, StepOutcome& outcome) override;
  void WaitUntil(absl::Time t) override;
};

class PricedClock : public ReplayClock {
 public:
  // `executor` (not owned) priced each step; Execute set completed_at.
  explicit PricedClock(const SimulatedExecutor* executor) : executor_(executor) {}
  absl::Time Now() override { return now_; }
  double StepDone(absl::Time started, StepOutcome& outcome) override;
  void WaitUntil(absl::Time t) override { now_ = std::max(now_, t); }

 private:
  const SimulatedExecutor* executor_;
  absl::Time now_ = absl::UnixEpoch();
};

// ReplaySchedulerOptions()
//
// Users of the replay list, its work classes as HouseholdWorkClasses()
// configures them (voice > chat > agent in priority; TTFT targets 0.5, 2 and
// 5 s, which the household policy serves by), and `policy` from the
// registry. The caller sizes KV and the step
// budget for its executor. InvalidArgument for an unknown policy.
absl::StatusOr<SchedulerOptions> ReplaySchedulerOptions(const std::string& policy);

// Drive()
//
// Runs `list` to the end. `sim` (may be null) learns each request's hidden
// output length from `lengths` (by index). Internal when a request ends
// other than finished; a scheduler or executor error as returned.
absl::StatusOr<RunRecord> Drive(Scheduler& scheduler, StepExecutor& executor, ReplayClock& clock,
                                const std::vector<ReplayRequest>& list, SimulatedExecutor* sim,
                                const std::vector<int32_t>& lengths);

// RunSimulated()
//
// The simulated side: a fresh scheduler with `options`, a SimulatedExecutor
// pricing with `cost`, and each request's hidden length from `lengths`.
absl::StatusOr<RunRecord> RunSimulated(const SchedulerOptions& options, const StepCostModel& cost,
                                       const std::vector<ReplayRequest>& list,
                                       const std::vector<int32_t>& lengths);

struct PolicyOutcome {
  std::string policy;
  ReplayComparison requests;
  ErrorSummary steps;
  double real_voice_p90 = 0, sim_voice_p90 = 0;
  // TTFT and E2E errors: median <= 15% and p90 <= 25%.
  bool meets_target = false;
};

// CompareAndReport()
//
// Per-step error (each real step's plan priced by `cost`), per-request TTFT
// and E2E error, voice p90 TTFT; prints a table, and when `out_dir` is not
// empty writes requests_<policy>.csv, steps_<policy>.csv and requests.jsonl.
absl::StatusOr<PolicyOutcome> CompareAndReport(const std::string& policy,
                                               const std::vector<ReplayRequest>& list,
                                               const RunRecord& real, const RunRecord& sim,
                                               const StepCostModel& cost,
                                               const std::string& out_dir);

// PrintSummary()
//
// One line per run (policy, real and simulated voice p90 TTFT, TTFT and E2E
// error median / p90, target met), then per policy the worst of its runs.
void PrintSummary(const std::vector<PolicyOutcome>& outcomes);

// PrintOrdering()
//
// Prints, for each pair of policies, whether the simulator orders their
// voice p90 TTFT as the real engine does (JudgeOrder, policy_order.h).
// `outcomes` may hold several runs of a policy (repeats, by name); one run
// each is judged with the 5% floor alone. Returns whether all pairs agree;
// InvalidArgument from JudgeOrder (a policy without voice requests).
absl::StatusOr<bool> PrintOrdering(const std::vector<PolicyOutcome>& outcomes);

}  // namespace hearth::fidelity

#endif  // HEARTH_BENCH_FIDELITY_REPLAY_DRIVER_H_

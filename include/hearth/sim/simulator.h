// File: hearth/sim/simulator.h
//
// RunSimulation() replays a Workload through the real hearth::Scheduler on a
// simulated clock. It is a discrete-event loop over the iteration contract:
//
//   submit every request whose arrival time has come (arrival_time stamped)
//   plan = scheduler.Plan(now)
//   executor.Execute(plan)        // SimulatedExecutor: cost model + hidden
//   scheduler.Complete(outcome)   // output lengths; completed_at = now + t
//   now = completed_at; results release dependent calls (agent chains)
//   when nothing runs: jump to the next arrival (or tick while work waits)
//
// No scheduling decision is made here: admission, chunking, preemption and
// ordering are the scheduler's and its policy's. The loop is deterministic:
// the same workload and options give byte-identical results.
//
// Example:
//   hearth::SimulationOptions o;
//   o.scheduler = options;                  // users, classes, KV, policy
//   o.cost_model = &cost_model;
//   absl::StatusOr<hearth::SimulationResult> r =
//       hearth::RunSimulation(workload, o);
//   std::cout << r->report.total.ttft.p99;

#ifndef HEARTH_SIM_SIMULATOR_H_
#define HEARTH_SIM_SIMULATOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/metrics/metrics_report.h"
#include "hearth/scheduler/scheduler_options.h"
#include "hearth/sim/cost_model.h"
#include "hearth/sim/oracle_policy.h"
#include "hearth/sim/workload.h"

namespace hearth {

// Output-length predictions the simulator hands the scheduler with each
// request (RequestSpec::predicted_output), made from the request's true
// length so that the value of prediction can be measured: with noise 0 the
// host predicts exactly; with noise sigma the expected length is
// true x exp(sigma x z), z standard normal (a log-normal error, the shape
// length predictors' errors take), drawn per request from the run's seed.
// The range is expected x exp(-/+ 1.2816 sigma) (the 10th and 90th
// percentiles of that error). Everything is clamped to [1, max_new_tokens].
struct OutputHintOptions {
  bool enabled = false;
  // Must be finite and in [0, 10].
  double noise_sigma = 0;
};

struct SimulationOptions {
  // Registries, KV cache, engine limits and policy. metrics_sink and
  // on_result must be left unset: the simulator uses them. models[0] serves
  // every request.
  SchedulerOptions scheduler;
  // Prices steps. Not owned; required.
  const StepCostModel* cost_model = nullptr;

  // max_new_tokens for requests that do not set one (clamped to the model's
  // context). Must be >= 1.
  int32_t default_max_new_tokens = 4096;
  // Per class: requests end as timed out this long after arrival. Empty, or
  // one per class; InfiniteDuration() for none.
  std::vector<absl::Duration> class_timeouts;
  // Per class SLO targets for attainment and goodput. Empty (the scheduler's
  // own targets, WorkClassConfig's) or one per class.
  std::vector<SloTarget> class_slos;
  // VTC token weights used by the metrics' weighted service.
  double prefill_weight = 1.0;
  double decode_weight = 2.0;

  // Record a Perfetto timeline (costly on long runs; bounded by
  // timeline_max_events).
  bool record_timeline = false;
  size_t timeline_max_events = 2'000'000;
  // Sampling period of the metrics time series.
  absl::Duration series_interval = absl::Seconds(10);
  // Latency samples kept exactly per series before the report's percentiles
  // come from a reservoir (MetricsOptions::max_samples_per_series; 0: 2^20).
  // A capacity search judging a P99 raises it to the run's token count: the
  // tail is a step (the gaps a prefill stalls), and a sampled P99 lands on
  // either side of it (Sarathi-Serve's workload at 1 request/s, 890k gaps:
  // the total's and the class's reservoirs of the same gaps gave 86 and
  // 108 ms).
  size_t latency_samples_per_series = size_t{1} << 16;
  // Clock advance when work waits but nothing can run. Must be > 0.
  absl::Duration idle_tick = absl::Milliseconds(10);
  // Seeds synthetic token ids for prefix sharing.
  uint64_t seed = 1;
  // Called now and then with the fraction of requests ended so far.
  std::function<void(double)> progress;
  // When set, replaces scheduler.policy_factory: the run builds the policy
  // with a table of each live request's true output length, recorded before
  // the policy hears of the request (oracle_policy.h). Only baselines that
  // no real engine could run use it.
  OraclePolicyFactory oracle_policy;
  // Predicted output lengths passed with each request (off: none).
  OutputHintOptions output_hints;
};

struct SimulationResult {
  std::string policy_name;
  std::string cost_model;
  MetricsReport report;
  std::vector<SeriesPoint> series;
  // Per class, ascending TTFT samples (seconds) for CDF plots.
  std::vector<std::vector<double>> class_ttft;
  // Empty unless record_timeline.
  std::string timeline_json;

  uint64_t steps = 0;
  // Simulated time from start to the last step's end.
  double simulated_seconds = 0;
  // Requests Submit() refused (e.g. longer than the context) and dependent
  // calls never issued because their parent did not finish.
  uint64_t submit_rejected = 0;
  // submit_rejected by reason: "over_context" (the prompt leaves no room in
  // the model's context), else the scheduler's status code name (e.g.
  // "RESOURCE_EXHAUSTED"). The scheduler's metrics never see them, so the
  // simulator adds them to `report` (their user, class and total) as
  // arrived and rejected: every table built from the report counts them.
  std::map<std::string, uint64_t> submit_rejected_by_reason;
  uint64_t dependents_dropped = 0;
  uint64_t prefix_hit_tokens = 0;
  // report.total.preemptions by how they were carried out: KV copied to the
  // host tier, or dropped and recomputed (also when swap was configured but
  // the host tier was full).
  uint64_t swap_preemptions = 0;
  uint64_t recompute_preemptions = 0;
  // Agent workflows (a first call and the chain of calls that name it, via
  // their parents, as RequestSpec::parent): seconds from the first call's
  // arrival to the last call's end, over workflows of two or more calls that
  // all finished. Ascending. The simulator passes parents to the scheduler,
  // so workflow-aware policies see them.
  std::vector<double> workflow_seconds;
  // Workflows of two or more calls, and those with a call that did not
  // finish (timed out, rejected, failed, or never issued).
  uint64_t workflows = 0;
  uint64_t workflows_incomplete = 0;
  // The VTC paper's fairness figure (Sheng et al., OSDI'24, Figures 3, 7, 8:
  // "absolute difference in service"): per user with requests, the
  // normalised weighted service (report.users[].normalized_service, VTC's
  // cost) accumulated since the first arrival; the difference between the
  // most and the least served of them, at each point of `series`; the
  // largest over the points up to the last arrival (the paper's artifact
  // stops looking there too, so the drain after the arrivals end, where
  // FIFO's difference keeps growing, is left out). Sampled every
  // series_interval, so at most one interval's service below the exact
  // maximum. 0 with fewer than two users with requests.
  double max_accumulated_service_difference = 0;
};

// InvalidArgument for inconsistent options or workload (naming what);
// Internal if the scheduler rejects the simulator's own outcome or the run
// stops making progress.
absl::StatusOr<SimulationResult> RunSimulation(const Workload& workload,
                                               const SimulationOptions& options);

}  // namespace hearth

#endif  // HEARTH_SIM_SIMULATOR_H_

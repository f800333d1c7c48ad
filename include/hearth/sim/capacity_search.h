// File: hearth/sim/capacity_search.h
//
// Capacity: the highest offered load a configuration sustains while a
// criterion holds, found by bisection on load (each evaluation one
// simulation). Two criteria use it: the household SLO capacity of
// `hearth_sim_cli --slo_capacity` (every class meets its SLO for a share of
// its requests) and the latency criterion below, Sarathi-Serve's (Agrawal et
// al., OSDI'24): a P99 bound on the time between tokens and a bound on the
// median scheduling delay, as its artifact's capacity search judges a run
// (sarathi/benchmark/capacity_search in github.com/microsoft/sarathi-serve).
//
// The bisection assumes nothing of the criterion: when it does not fall with
// load the answer is one load at which it held, next to one at which it did
// not. Two criteria of which one implies the other at every load (a tighter
// bound) are bisected along the same path until their first disagreement,
// after which the looser one searches above the tighter one: the tighter
// criterion's capacity is never the higher.
//
// Example:
//   hearth::BisectionOptions o{.low = 0.25, .high = 16, .steps = 10};
//   // A criterion that holds up to 3.3 requests/s (a simulation, in use).
//   absl::StatusOr<hearth::BisectionResult> r = hearth::BisectCapacity(
//       o, [](double rate) -> absl::StatusOr<bool> { return rate <= 3.3; });
//   if (r.ok()) std::cout << r->capacity;   // 3.3 to within 16 / 2^10

#ifndef HEARTH_SIM_CAPACITY_SEARCH_H_
#define HEARTH_SIM_CAPACITY_SEARCH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/metrics/metrics_report.h"

namespace hearth {

struct BisectionOptions {
  // The load tried first; when the criterion fails there, [0, low] is
  // bisected instead of [low, high]. 0 < low <= high, both finite.
  double low = 0.2;
  double high = 1.6;
  // Bisection steps after the first try, in [0, 64]; 0: the first try alone.
  int32_t steps = 7;
};

struct BisectionResult {
  // The highest load tried at which the criterion held; 0 when it held at
  // none.
  double capacity = 0;
  // The lowest load tried above `capacity` at which it failed; `high` (never
  // tried) when it held wherever it was tried.
  double lowest_failing = 0;
  bool saw_failure = false;
  // Loads tried, in order.
  std::vector<double> tried;
};

// Bisects `meets` (true: the criterion held at that load) as described
// above; InvalidArgument for bad options, and `meets`'s errors as they are.
absl::StatusOr<BisectionResult> BisectCapacity(
    const BisectionOptions& options, const std::function<absl::StatusOr<bool>(double)>& meets);

// Sarathi-Serve's criterion, over every request of a run. InfiniteDuration:
// no bound. The time between tokens is MetricsReport's inter-token latency
// (each gap between consecutive tokens of a request, stalls and preemptions
// included, as the artifact's "decode token execution plus preemption
// time"); the scheduling delay is its queue wait (arrival to first
// admission, the artifact's "request scheduling delay").
struct LatencyCriterion {
  absl::Duration p99_itl = absl::InfiniteDuration();
  absl::Duration p50_queue_wait = absl::InfiniteDuration();
  absl::Duration p50_ttft = absl::InfiniteDuration();

  // True when no bound is set.
  bool empty() const;
  // "P99 ITL <= 100 ms, median queue wait <= 2 s".
  std::string Describe() const;
};

// The bounds of `criterion` that `total` (a run's MetricsReport::total)
// misses, e.g. "P99 ITL 131 ms > 100 ms"; empty when it meets them all. A run
// that finished no request misses every bound it sets ("nothing finished").
std::string LatencyCriterionMisses(const LatencyCriterion& criterion, const GroupReport& total);

// What a scenario's [capacity] table asks of `hearth_sim_cli --capacity`
// (latency_capacity.h): the criterion, the token budgets to compare and the
// bisection in requests per second.
struct CapacitySpec {
  LatencyCriterion criterion;
  // Per budget one search, the engine's step token budget and prefill chunk
  // (SchedulerOptions::max_batched_tokens; max_prefill_chunk_tokens 0) set to
  // it. Empty: the engine as the scenario sets it, once.
  std::vector<int32_t> token_budgets;
  BisectionOptions bisection{.low = 0.25, .high = 16, .steps = 10};
};

}  // namespace hearth

#endif  // HEARTH_SIM_CAPACITY_SEARCH_H_

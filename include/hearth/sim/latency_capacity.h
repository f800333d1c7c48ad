// File: hearth/sim/latency_capacity.h
//
// `hearth_sim_cli --capacity`: each policy's capacity, in requests per
// second, under a scenario's latency criterion ([capacity] table,
// capacity_search.h), once per token budget it lists, so that chunked and
// unchunked prefill are compared as Sarathi-Serve's capacity figures compare
// them. Every run replays the scenario's requests with the arrival axis
// scaled to the rate tried (load_scaling.h, load 1 pinned to the highest rate
// of the search): the same requests in the same order at every rate, every
// policy and budget on the same draws.
//
// Example:
//   absl::StatusOr<hearth::LatencyCapacityResult> r = hearth::RunLatencyCapacity(scenario);
//   std::cout << hearth::LatencyCapacityMarkdown(scenario, *r);

#ifndef HEARTH_SIM_LATENCY_CAPACITY_H_
#define HEARTH_SIM_LATENCY_CAPACITY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/sim/capacity_search.h"
#include "hearth/sim/scenario_config.h"

namespace hearth {

struct CapacityCell {
  std::string policy;
  // The step token budget searched; 0 when the scenario lists none (the
  // engine as set).
  int32_t token_budget = 0;
  // In requests per second.
  BisectionResult search;
  // The run at search.capacity, in seconds (all 0 when the capacity is 0).
  double p99_itl_s = 0;
  double p50_queue_wait_s = 0;
  double p50_ttft_s = 0;
  // The bounds missed at search.lowest_failing (LatencyCriterionMisses);
  // empty when no run failed.
  std::string limited_by;
};

struct LatencyCapacityResult {
  std::string scenario;
  CapacitySpec spec;
  // Requests in each run.
  size_t requests = 0;
  // Policy-major in the scenario's order, token budgets in the spec's.
  std::vector<CapacityCell> cells;
};

// `on_run(policy, token_budget, rate)` is called before each run (progress).
// InvalidArgument when the scenario's criterion sets no bound, or a budget
// is below engine.max_running; errors of a run, prefixed with its policy,
// budget and rate.
absl::StatusOr<LatencyCapacityResult> RunLatencyCapacity(
    const Scenario& scenario,
    const std::function<void(const std::string&, int32_t, double)>& on_run = {});

// The capacity figures of reference_figures.h (kCapacityFigureNames) for
// `policy`: capacity_per_s its capacity at the last budget, capacity_gain
// that over its capacity at the first. NotFound when the policy was not
// run; InvalidArgument for another figure.
absl::StatusOr<double> MeasuredCapacityFigure(std::string_view figure, const std::string& policy,
                                              const LatencyCapacityResult& result);

// The table of capacities (policy, budget, requests/s, ratio to the first
// budget and to FIFO at the same budget, the latencies at capacity and what
// failed above it), then the scenario's [paper] capacity figures beside
// Hearth's and each oracle policy's.
std::string LatencyCapacityMarkdown(const Scenario& scenario, const LatencyCapacityResult& result);

}  // namespace hearth

#endif  // HEARTH_SIM_LATENCY_CAPACITY_H_

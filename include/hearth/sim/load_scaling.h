// File: hearth/sim/load_scaling.h
//
// Offers any scenario's workload at a chosen load: a fraction of the
// requests per second FIFO finishes when saturated by that same workload
// (its capacity). Two ways, by kind:
//
//  - A household whose [workload] sets `load`: BuildWorkload already
//    measures the capacity (see bench/suites/README.md, "How load is
//    calibrated"); load L sets the generator's load_scale so that calls
//    arrive at L x capacity. Floods stay as they are.
//  - Every other scenario (traces, generators, a household without `load`):
//    the workload is built once as the scenario says, then its time axis is
//    scaled. Offered requests/s at scale 1 is the workload's requests over
//    the span from its first to its last independent arrival; at load L each
//    independent arrival moves to first + (t - first) / f, with
//    f = L x capacity / offered. Dependent calls (agent chains) keep their
//    think times, so for them the offered rate is approximate. Capacity:
//    FIFO runs the workload at f = 1, 2, 4, ... (class timeouts off) until
//    the backlog outlives the arrivals by 20%; finished requests per second
//    from the first arrival to the last step of that run.
//
// Example:
//   absl::StatusOr<hearth::LoadScaling> l = hearth::LoadScaling::Create(scenario);
//   absl::StatusOr<hearth::Workload> w = l->WorkloadAt(0.9);

#ifndef HEARTH_SIM_LOAD_SCALING_H_
#define HEARTH_SIM_LOAD_SCALING_H_

#include <string>

#include "absl/status/statusor.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/workload.h"

namespace hearth {

class LoadScaling {
 public:
  // Measures FIFO's capacity, or takes `pinned_capacity_per_s` (> 0) as it,
  // so that two builds are compared on the same offered loads.
  // InvalidArgument for a workload with no requests or no arrival span
  // (every request at one instant), or a negative pin; Internal when FIFO
  // cannot be saturated (2^12 x compression).
  static absl::StatusOr<LoadScaling> Create(const Scenario& scenario,
                                            double pinned_capacity_per_s = 0);

  // The workload offered at `load` x capacity; InvalidArgument unless load
  // is in (0, 100).
  absl::StatusOr<Workload> WorkloadAt(double load) const;

  // Requests/s that load 1 stands for.
  double capacity_per_s() const { return capacity_per_s_; }
  // How load is applied, for reports ("household load_scale" or "time
  // scale").
  std::string Describe() const;

 private:
  LoadScaling() = default;

  Scenario scenario_;
  bool household_scale_ = false;
  double capacity_per_s_ = 0;
  // Requests/s offered at scale 1 (household: calls/s at load_scale 1).
  double offered_per_s_at_unit_ = 0;
  // Time-scaled kinds: the workload as built, and its first arrival.
  Workload base_;
  absl::Duration first_arrival_ = absl::ZeroDuration();
};

}  // namespace hearth

#endif  // HEARTH_SIM_LOAD_SCALING_H_

// File: bench/burst/bystander_probe.h
//
// The bystander's side of the burst: now and then one request from another
// member, and for each whether Submit accepted it (the error if not) and how
// many steps after its arrival it first appeared in a plan. The arrival is
// between two steps, so a request in the very next plan waited 0 steps; the
// issue's acceptance is "admitted within one step of its arrival".

#ifndef HEARTH_BENCH_BURST_BYSTANDER_PROBE_H_
#define HEARTH_BENCH_BURST_BYSTANDER_PROBE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hearth/scheduler/scheduler.h"

namespace hearth::bench {

struct BystanderRequest {
  // Steps planned before the submission.
  uint64_t submitted_after_step = 0;
  bool accepted = false;
  std::string error;
  // Step of the first plan that scheduled it; 0 while never scheduled.
  uint64_t first_planned_step = 0;

  // Steps waited after arrival: 0 when in the next plan. REQUIRES: planned.
  uint64_t wait_steps() const { return first_planned_step - submitted_after_step - 1; }
  bool planned() const { return first_planned_step != 0; }
};

class BystanderProbe {
 public:
  explicit BystanderProbe(UserId user) : user_(user) {}

  // Submits one request after `steps_done` plans.
  void Submit(Scheduler& scheduler, uint64_t steps_done);
  // Looks for waiting requests among `plan`'s sequences.
  void Observe(const StepPlan& plan);

  const std::vector<BystanderRequest>& requests() const { return requests_; }
  size_t not_yet_planned() const { return waiting_.size(); }

 private:
  UserId user_;
  std::vector<BystanderRequest> requests_;
  // Accepted and not yet planned: id -> index in requests_.
  absl::flat_hash_map<RequestId, size_t> waiting_;
};

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_BURST_BYSTANDER_PROBE_H_

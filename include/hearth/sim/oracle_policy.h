// File: hearth/sim/oracle_policy.h
//
// Baselines no real scheduler can run: shortest remaining output first with
// the true output lengths, which only the simulator knows (they are hidden
// from the scheduler and from every other policy). They are the ceiling a
// policy without foreknowledge (MLFQ, VTC, FIFO) can approach on mean job
// completion time, reported beside them.
//
//   "oracle_srpt"             admits the waiting request with the fewest true
//                             output tokens left (ties: earlier arrival) and
//                             never preempts for admission: shortest job
//                             first, non-preemptive.
//   "oracle_srpt_preemptive"  the same order, and a waiting request also
//                             preempts the running request with the most
//                             output left when that is more than its own:
//                             shortest remaining processing time.
//
// Both choose memory-growth victims by the same order: the running request
// with the most output left, if it has more left than the one that must grow
// (ties: the later arrival). The order is strict and a preempted request's
// remaining output does not change while it waits, so no two requests can
// preempt each other in turn. Remaining output counts output tokens only: a
// prompt's prefill and a recompute are not weighed.
//
// The simulator feeds the lengths: set SimulationOptions::oracle_policy
// (SimulationOptionsFor does it for these names) and RunSimulation records
// each request's true output length before the policy sees it.
//
// Example:
//   hearth::SimulationOptions o;
//   o.scheduler = options;
//   o.cost_model = &cost_model;
//   absl::StatusOr<hearth::OraclePolicyFactory> f =
//       hearth::MakeOraclePolicyFactory("oracle_srpt_preemptive");
//   if (!f.ok()) return f.status();
//   o.oracle_policy = *f;
//   absl::StatusOr<hearth::SimulationResult> r = hearth::RunSimulation(workload, o);

#ifndef HEARTH_SIM_ORACLE_POLICY_H_
#define HEARTH_SIM_ORACLE_POLICY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hearth/common/ids.h"
#include "hearth/policy/policy.h"

namespace hearth {

// True output lengths of the live requests of one simulation run. Not
// thread-safe; the run and its policy use it on one thread.
class TrueOutputLengths {
 public:
  // Records `tokens` (>= 1: the tokens the request will generate, already
  // capped by its max_new_tokens) for `id`.
  void Set(RequestId id, int32_t tokens) { tokens_[id] = tokens; }
  void Forget(RequestId id) { tokens_.erase(id); }
  // The recorded length, or `fallback` when `id` has none.
  int32_t Get(RequestId id, int32_t fallback) const {
    auto it = tokens_.find(id);
    return it == tokens_.end() ? fallback : it->second;
  }

 private:
  absl::flat_hash_map<RequestId, int32_t> tokens_;
};

// Builds an oracle policy for one scheduler; `lengths` outlives the policy.
using OraclePolicyFactory = std::function<std::unique_ptr<Policy>(
    const SchedulerOptions&, const TrueOutputLengths& lengths)>;

// A request whose length was never recorded counts its max_new_tokens.
std::unique_ptr<Policy> NewOracleSrptPolicy(const TrueOutputLengths& lengths,
                                            bool preemptive);

// "oracle_srpt", "oracle_srpt_preemptive".
std::vector<std::string_view> OraclePolicyNames();
bool IsOraclePolicy(std::string_view name);

// InvalidArgument for a name not in OraclePolicyNames().
absl::StatusOr<OraclePolicyFactory> MakeOraclePolicyFactory(std::string_view name);

}  // namespace hearth

#endif  // HEARTH_SIM_ORACLE_POLICY_H_

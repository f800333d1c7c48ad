// File: src/scheduler/victim_pricing.h
//
// VictimPricing: the core's side of Policy::ChooseVictim. It prices each
// candidate from the request table and the KV room alone (what the
// preemption throws away, what it frees) and says which ones the core would
// refuse to preempt now, so that the policy chooses and the core only checks
// the answer against the same prices.
//
// Built on the stack for one choice; holds references only. Engine thread.

#ifndef HEARTH_SRC_SCHEDULER_VICTIM_PRICING_H_
#define HEARTH_SRC_SCHEDULER_VICTIM_PRICING_H_

#include <cstdint>

#include "hearth/policy/preemption_costs.h"
#include "hearth/scheduler/scheduler_options.h"
#include "kv/kv_cache_manager.h"
#include "scheduler/request_table.h"

namespace hearth::internal {

// Where the step being built stands: requests admitted in it are not
// preempted, and requests scheduled in it lose that work too.
struct PlanningStep {
  uint64_t step = 0;
  // False between steps (a cancellation or change outside Plan).
  bool planning = false;
};

class VictimPricing final : public PreemptionCosts {
 public:
  // `max_preemptions`: a candidate preempted that often is not allowed.
  VictimPricing(const RequestTable& table, const KvCacheManager& kv,
                const SchedulerOptions& options, PlanningStep at, const VictimRequest& request,
                int32_t max_preemptions)
      : table_(table),
        kv_(kv),
        options_(options),
        at_(at),
        request_(request),
        max_preemptions_(max_preemptions) {}

  PreemptionPrice Price(RequestId victim) const override;

  // Whether `record` may be preempted at all in this step: it runs, and was
  // not admitted or swapped in during it (its copies may be queued in the
  // plan).
  static bool Preemptible(const RequestRecord& record, PlanningStep at) {
    return record.phase == RequestPhase::kRunning && record.admitted_step != at.step;
  }

 private:
  // Work thrown away, in prefill tokens (PreemptionPrice::waste_tokens).
  double Waste(const RequestRecord& record) const;

  const RequestTable& table_;
  const KvCacheManager& kv_;
  const SchedulerOptions& options_;
  const PlanningStep at_;
  const VictimRequest request_;
  const int32_t max_preemptions_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_VICTIM_PRICING_H_

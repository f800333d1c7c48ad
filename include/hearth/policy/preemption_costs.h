// File: hearth/policy/preemption_costs.h
//
// What the core tells a policy about the price of preempting each running
// request, so that the policy alone chooses the victim (Policy::ChooseVictim)
// while the core alone knows the KV cache: how many blocks a preemption
// returns, whether it swaps or recomputes, and which requests it may not
// touch this step.
//
// Example (a policy whose victim is its first allowed candidate, at any cost):
//   class FirstAllowed : public hearth::Policy {
//    public:
//     hearth::RequestId ChooseVictim(const hearth::VictimRequest& request,
//                                    const hearth::PreemptionCosts& costs) override {
//       hearth::RequestId ids[hearth::kMaxVictimCandidates];
//       const size_t n =
//           VictimCandidates(request.beneficiary, request.beneficiary_running, ids);
//       for (size_t i = 0; i < n; ++i) {
//         if (costs.Price(ids[i]).allowed) return ids[i];
//       }
//       return hearth::RequestId();
//     }
//   };

#ifndef HEARTH_POLICY_PREEMPTION_COSTS_H_
#define HEARTH_POLICY_PREEMPTION_COSTS_H_

#include <cstdint>

#include "absl/types/span.h"
#include "hearth/common/ids.h"

namespace hearth {

// The price of preempting one running request now.
struct PreemptionPrice {
  // False when the core will not preempt it for this request: it is not
  // running, it is the beneficiary, it was admitted or swapped in during this
  // step, it was preempted too often already for this kind of reclaim
  // (SchedulerOptions::max_preemptions_per_request, kMaxShareReclaims), or,
  // for a waiting beneficiary, it would throw away more than
  // SchedulerOptions::max_admission_waste_per_block allows.
  bool allowed = false;
  // Engine work thrown away, in prefill tokens: its computed whole blocks to
  // recompute (block_size tokens each), or, when the core would swap it out,
  // their round trip (swap_block_cost_tokens per block). Work planned in the
  // step being built is counted too.
  double waste_tokens = 0;
  // Device blocks the preemption returns to the pool.
  int32_t freed_blocks = 0;
};

// Why a victim is wanted.
enum class VictimReason {
  // The beneficiary ranks above the victim in the policy's order
  // (Policy::VictimCandidates).
  kPolicyOrder,
  // The beneficiary's member is entitled to the victim's member's blocks
  // (Policy::ShareReclaimCandidates); a waiting beneficiary only.
  kMemberShare,
};

struct VictimRequest {
  RequestId beneficiary;
  // True: a running request needs KV growth; false: a waiting request asks
  // to be admitted.
  bool beneficiary_running = false;
  // Device blocks the beneficiary is short of, >= 1.
  int32_t need_blocks = 1;
  VictimReason reason = VictimReason::kPolicyOrder;
};

// The core's prices, valid only during the Policy::ChooseVictim call that
// receives it. Price() does not allocate and is O(1); it may be asked about
// any id, including ids that are not running (they come back not allowed).
class PreemptionCosts {
 public:
  virtual PreemptionPrice Price(RequestId victim) const = 0;

 protected:
  ~PreemptionCosts() = default;
};

// CheapestVictim()
//
// Among `candidates` (the policy's order, the one it values least first), the
// allowed one that throws away the least work per block it frees, preferring
// any that frees `need_blocks` alone over all that do not: memory pressure
// outlasts the one request that met it, so the least work in all (the
// shortest request) would free a few blocks and be followed by more
// preemptions. Ties keep the candidates' order. Invalid id when none is
// allowed.
RequestId CheapestVictim(absl::Span<const RequestId> candidates, int32_t need_blocks,
                         const PreemptionCosts& costs);

}  // namespace hearth

#endif  // HEARTH_POLICY_PREEMPTION_COSTS_H_

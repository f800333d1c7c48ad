// File: src/policy/preemption_costs.cc
//
// CheapestVictim: the default price rule of Policy::ChooseVictim.

#include "hearth/policy/preemption_costs.h"

#include <algorithm>

namespace hearth {

RequestId CheapestVictim(absl::Span<const RequestId> candidates, int32_t need_blocks,
                         const PreemptionCosts& costs) {
  RequestId best;
  bool best_covers = false;
  double best_price = 0;
  for (RequestId id : candidates) {
    const PreemptionPrice p = costs.Price(id);
    if (!p.allowed) continue;
    // Work thrown away per block freed: the measure that keeps the next
    // growth or admission from needing another preemption at once.
    const bool covers = p.freed_blocks >= need_blocks;
    const double price = p.waste_tokens / std::max(p.freed_blocks, 1);
    if (!best.valid() || (covers && !best_covers) ||
        (covers == best_covers && price < best_price)) {
      best = id;
      best_covers = covers;
      best_price = price;
    }
  }
  return best;
}

}  // namespace hearth

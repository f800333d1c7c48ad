// File: src/scheduler/victim_pricing.cc

#include "scheduler/victim_pricing.h"

#include <algorithm>

namespace hearth::internal {

PreemptionPrice VictimPricing::Price(RequestId victim) const {
  PreemptionPrice p;
  const RequestRecord* v = table_.Find(victim);
  if (v == nullptr || v->id == request_.beneficiary || !Preemptible(*v, at_) ||
      v->preemptions >= max_preemptions_) {
    return p;
  }
  p.waste_tokens = Waste(*v);
  p.freed_blocks = kv_.BlocksFreedBy(v->kv, request_.beneficiary_running);
  // An admission does not evict more work than its own blocks are worth
  // (SchedulerOptions::max_admission_waste_per_block); growth has no such
  // bound, since the running beneficiary would otherwise yield itself.
  p.allowed = request_.beneficiary_running ||
              p.waste_tokens <= options_.max_admission_waste_per_block * request_.need_blocks *
                                    options_.kv.block_size;
  return p;
}

double VictimPricing::Waste(const RequestRecord& r) const {
  // Whole blocks: a partly filled last block is held like a full one, so
  // running sequences all cost block_size tokens per block freed and the
  // policy's order decides among them, instead of the shortest (whose last
  // block is emptiest) always looking cheapest. Work already planned in this
  // step is thrown away too, with the blocks taken for it.
  const bool scheduled_now = at_.planning && r.scheduled_step == at_.step;
  const int32_t blocks = std::max(kv_.BlocksFor(r.computed), scheduled_now ? r.kv.num_blocks() : 0);
  return kv_.SwapsOut(r.kv, r.computed) ? blocks * options_.swap_block_cost_tokens
                                  : static_cast<double>(blocks) * options_.kv.block_size;
}

}  // namespace hearth::internal

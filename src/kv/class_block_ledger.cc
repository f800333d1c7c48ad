#include "kv/class_block_ledger.h"

namespace hearth::internal {

ClassBlockLedger::ClassBlockLedger(const std::vector<WorkClassConfig>& classes)
    : held_(classes.size(), 0), reserved_(classes.size(), 0) {
  budgets_.reserve(classes.size());
  for (const WorkClassConfig& c : classes) {
    budgets_.push_back({c.kv_block_budget, !c.borrow && c.kv_block_budget > 0});
  }
}

int32_t ClassBlockLedger::ReservationFor(uint32_t cls, int32_t max_blocks) const {
  if (!has_hard_budget(cls)) return 0;
  return reserved_[cls] + max_blocks > budgets_[cls].blocks ? -1 : max_blocks;
}

}  // namespace hearth::internal

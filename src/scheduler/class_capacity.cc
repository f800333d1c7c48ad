#include "scheduler/class_capacity.h"

namespace hearth::internal {

ClassCapacity::ClassCapacity(const std::vector<WorkClassConfig>& classes)
    : running_(classes.size(), 0), blocks_(classes.size(), 0), reserved_(classes.size(), 0) {
  limits_.reserve(classes.size());
  for (const WorkClassConfig& c : classes) {
    limits_.push_back({c.max_running, c.kv_block_budget, c.borrow});
  }
}

int32_t ClassCapacity::ReservationFor(uint32_t cls, int32_t max_blocks) const {
  if (!has_hard_budget(cls)) return 0;
  return reserved_[cls] + max_blocks > limits_[cls].kv_block_budget ? -1 : max_blocks;
}

void ClassCapacity::MarkBorrowing(uint32_t slot) {
  Link& l = links_[slot];
  if (l.in) return;
  l = {tail_, kNone, true};
  (tail_ == kNone ? head_ : links_[tail_].next) = slot;
  tail_ = slot;
  ++num_borrowers_;
}

void ClassCapacity::ClearBorrowing(uint32_t slot) {
  Link& l = links_[slot];
  if (!l.in) return;
  (l.prev == kNone ? head_ : links_[l.prev].next) = l.next;
  (l.next == kNone ? tail_ : links_[l.next].prev) = l.prev;
  l = {};
  --num_borrowers_;
}

}  // namespace hearth::internal

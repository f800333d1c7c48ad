#include "scheduler/class_capacity.h"

namespace hearth::internal {

ClassCapacity::ClassCapacity(const std::vector<WorkClassConfig>& classes,
                             const ClassBlockLedger& blocks)
    : running_(classes.size(), 0), blocks_(blocks) {
  limits_.reserve(classes.size());
  for (const WorkClassConfig& c : classes) limits_.push_back({c.max_running, c.borrow});
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

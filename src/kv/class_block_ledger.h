// File: src/kv/class_block_ledger.h
//
// ClassBlockLedger: the KV blocks each work class holds, its block budget,
// and the reservations that keep a hard budget without preemption. It is
// kept by KvCacheManager alone, on every block a sequence takes or gives
// back, so the class counts cannot drift from the block tables; the
// scheduler's ClassCapacity reads it for the block half of its predicate.
//
// Internal to the scheduler; engine thread only.

#ifndef HEARTH_SRC_KV_CLASS_BLOCK_LEDGER_H_
#define HEARTH_SRC_KV_CLASS_BLOCK_LEDGER_H_

#include <cstdint>
#include <vector>

#include "hearth/scheduler/scheduler_options.h"

namespace hearth::internal {

class ClassBlockLedger {
 public:
  explicit ClassBlockLedger(const std::vector<WorkClassConfig>& classes);

  // Whether `cls` keeps within its KV block budget (0: none) with
  // `more_blocks` more.
  bool Within(uint32_t cls, int32_t more_blocks) const {
    const Budget& b = budgets_[cls];
    return b.blocks == 0 || held_[cls] + more_blocks <= b.blocks;
  }
  // A budget that is never exceeded, even on idle capacity: the class may
  // not borrow.
  bool has_hard_budget(uint32_t cls) const { return budgets_[cls].hard; }
  // Blocks a hard-budget class may still take.
  int32_t hard_room(uint32_t cls) const { return budgets_[cls].blocks - held_[cls]; }
  // A hard budget is kept by reserving each running sequence's largest size
  // (`max_blocks`) at admission: growth then never needs the class's own
  // sequences to preempt each other. The reservation a sequence of `cls`
  // needs (0 without a hard budget), or -1 when it does not fit now.
  int32_t ReservationFor(uint32_t cls, int32_t max_blocks) const;

  int32_t held(uint32_t cls) const { return held_[cls]; }
  int32_t reserved(uint32_t cls) const { return reserved_[cls]; }
  size_t num_classes() const { return held_.size(); }

  // KvCacheManager's, as blocks move.
  void Add(uint32_t cls, int32_t delta) { held_[cls] += delta; }
  void Reserve(uint32_t cls, int32_t delta) { reserved_[cls] += delta; }

 private:
  struct Budget {
    int32_t blocks = 0;
    bool hard = false;
  };
  std::vector<Budget> budgets_;
  std::vector<int32_t> held_;
  std::vector<int32_t> reserved_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_KV_CLASS_BLOCK_LEDGER_H_

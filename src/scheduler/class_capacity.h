// File: src/scheduler/class_capacity.h
//
// ClassCapacity: the household work classes' capacity rules in one place —
// each class's cap on running sequences, its KV block budget, whether it may
// borrow idle capacity beyond them, and the reservations that keep a hard
// budget without preemption. Admission, decode growth and borrow reclaim all
// ask the same predicate, Within(), so that "entitled" means one thing.
//
// A class within its limits is entitled to room and may cause preemption; a
// class beyond them runs only on borrowed idle capacity, and its borrowers
// are reclaimed first (in the order the policy picks). Engine thread only.

#ifndef HEARTH_SRC_SCHEDULER_CLASS_CAPACITY_H_
#define HEARTH_SRC_SCHEDULER_CLASS_CAPACITY_H_

#include <cstdint>
#include <vector>

#include "hearth/scheduler/scheduler_options.h"

namespace hearth::internal {

// A borrower loses its work each time it is reclaimed; after this many
// preemptions only the policy may preempt it again. Otherwise a borrower the
// policy ranks first could be reclaimed and readmitted forever when classes
// each need most of the cache.
inline constexpr int32_t kMaxBorrowReclaims = 2;

class ClassCapacity {
 public:
  explicit ClassCapacity(const std::vector<WorkClassConfig>& classes);

  // The one predicate: whether `cls` keeps within its cap and KV budget with
  // `more_running` more running sequences and `more_blocks` more blocks.
  bool Within(uint32_t cls, int32_t more_running, int32_t more_blocks) const {
    const Limits& l = limits_[cls];
    return (l.max_running == 0 || running_[cls] + more_running <= l.max_running) &&
           (l.kv_block_budget == 0 || blocks_[cls] + more_blocks <= l.kv_block_budget);
  }
  bool Over(uint32_t cls) const { return !Within(cls, 0, 0); }
  bool may_borrow(uint32_t cls) const { return limits_[cls].borrow; }
  // A budget that is never exceeded, even on idle capacity.
  bool has_hard_budget(uint32_t cls) const {
    return !limits_[cls].borrow && limits_[cls].kv_block_budget > 0;
  }
  // Blocks a hard-budget class may still take.
  int32_t hard_room(uint32_t cls) const { return limits_[cls].kv_block_budget - blocks_[cls]; }

  // A hard budget is kept by reserving each running sequence's largest size
  // (`max_blocks`) at admission: growth then never needs the class's own
  // sequences to preempt each other. Returns the reservation a sequence of
  // `cls` needs (0 without a hard budget), or -1 when it does not fit now.
  int32_t ReservationFor(uint32_t cls, int32_t max_blocks) const;
  void Reserve(uint32_t cls, int32_t blocks) { reserved_[cls] += blocks; }

  void AddRunning(uint32_t cls, int32_t delta) { running_[cls] += delta; }
  void AddBlocks(uint32_t cls, int32_t delta) { blocks_[cls] += delta; }
  int32_t running(uint32_t cls) const { return running_[cls]; }
  int32_t blocks(uint32_t cls) const { return blocks_[cls]; }

  // --- Borrowers: running sequences (by record slot) beyond their class's
  // limits, in the order they started borrowing.
  void AddSlot() { links_.push_back({}); }
  void ReserveSlots(size_t n) { links_.reserve(n); }
  bool borrowing(uint32_t slot) const { return links_[slot].in; }
  void MarkBorrowing(uint32_t slot);
  void ClearBorrowing(uint32_t slot);
  // Walks in borrow order, either way; kNone past either end.
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t first_borrower() const { return head_; }
  uint32_t last_borrower() const { return tail_; }
  uint32_t next_borrower(uint32_t slot) const { return links_[slot].next; }
  uint32_t prev_borrower(uint32_t slot) const { return links_[slot].prev; }
  int32_t num_borrowers() const { return num_borrowers_; }

 private:
  struct Limits {
    int32_t max_running = 0;
    int32_t kv_block_budget = 0;
    bool borrow = true;
  };
  struct Link {
    uint32_t prev = kNone;
    uint32_t next = kNone;
    bool in = false;
  };

  std::vector<Limits> limits_;
  std::vector<int32_t> running_;
  std::vector<int32_t> blocks_;
  std::vector<int32_t> reserved_;
  std::vector<Link> links_;
  uint32_t head_ = kNone;
  uint32_t tail_ = kNone;
  int32_t num_borrowers_ = 0;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_CLASS_CAPACITY_H_

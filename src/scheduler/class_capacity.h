// File: src/scheduler/class_capacity.h
//
// ClassCapacity: the household work classes' capacity rules in one place —
// each class's cap on running sequences, its KV block budget (read from the
// KV room's ClassBlockLedger, which counts the blocks), and whether it may
// borrow idle capacity beyond them. Admission, decode growth and borrow
// reclaim all ask the same predicate, Within(), so that "entitled" means one
// thing.
//
// A class within its limits is entitled to room and may cause preemption; a
// class beyond them runs only on borrowed idle capacity, and its borrowers
// are reclaimed first (in the order the policy picks). Engine thread only.

#ifndef HEARTH_SRC_SCHEDULER_CLASS_CAPACITY_H_
#define HEARTH_SRC_SCHEDULER_CLASS_CAPACITY_H_

#include <cstdint>
#include <vector>

#include "hearth/scheduler/scheduler_options.h"
#include "kv/class_block_ledger.h"

namespace hearth::internal {

// A borrower loses its work each time it is reclaimed; after this many
// preemptions only the policy may preempt it again. Otherwise a borrower the
// policy ranks first could be reclaimed and readmitted forever when classes
// each need most of the cache.
inline constexpr int32_t kMaxBorrowReclaims = 2;

class ClassCapacity {
 public:
  // `blocks` must outlive this object.
  ClassCapacity(const std::vector<WorkClassConfig>& classes, const ClassBlockLedger& blocks);

  // The one predicate: whether `cls` keeps within its cap and KV budget with
  // `more_running` more running sequences and `more_blocks` more blocks.
  bool Within(uint32_t cls, int32_t more_running, int32_t more_blocks) const {
    return RunningWithin(cls, more_running) && blocks_.Within(cls, more_blocks);
  }
  // Its running half.
  bool RunningWithin(uint32_t cls, int32_t more_running) const {
    const Limits& l = limits_[cls];
    return l.max_running == 0 || running_[cls] + more_running <= l.max_running;
  }
  bool Over(uint32_t cls) const { return !Within(cls, 0, 0); }
  bool may_borrow(uint32_t cls) const { return limits_[cls].borrow; }

  void AddRunning(uint32_t cls, int32_t delta) { running_[cls] += delta; }
  int32_t running(uint32_t cls) const { return running_[cls]; }

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
    bool borrow = true;
  };
  struct Link {
    uint32_t prev = kNone;
    uint32_t next = kNone;
    bool in = false;
  };

  std::vector<Limits> limits_;
  std::vector<int32_t> running_;
  const ClassBlockLedger& blocks_;
  std::vector<Link> links_;
  uint32_t head_ = kNone;
  uint32_t tail_ = kNone;
  int32_t num_borrowers_ = 0;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_CLASS_CAPACITY_H_

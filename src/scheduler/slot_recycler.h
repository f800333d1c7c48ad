// File: src/scheduler/slot_recycler.h
//
// SlotRecycler: which record slots a new request may take. A slot freed by
// an ended request is reusable at once, unless a plan naming it may still be
// running (overlapped planning): the engine may be reading that plan's spans
// into the slot's token and block buffers, so the slot is held until that
// step completed. The scheduler decides which step a slot waits for; this
// type keeps the two lists. Engine thread only; no allocation once reserved.

#ifndef HEARTH_SRC_SCHEDULER_SLOT_RECYCLER_H_
#define HEARTH_SRC_SCHEDULER_SLOT_RECYCLER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace hearth::internal {

class SlotRecycler {
 public:
  // Room for `free` free slots and `held` held ones without allocating.
  void Reserve(size_t free, size_t held) {
    free_.reserve(free);
    held_.reserve(held);
  }

  // A free slot, the most recently freed first (its buffers are the
  // warmest), or none: the caller then adds a new one.
  std::optional<uint32_t> Take() {
    if (free_.empty()) return std::nullopt;
    const uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }

  // `slot` may be taken again now.
  void Free(uint32_t slot) { free_.push_back(slot); }
  // `slot` may be taken again once step `until` completed.
  void HoldUntil(uint32_t slot, uint64_t until) { held_.emplace_back(until, slot); }
  // Step `step` completed: the slots held for it and earlier steps are free,
  // in the order they were held. O(held slots).
  void StepCompleted(uint64_t step) {
    size_t kept = 0;
    for (const auto& [until, slot] : held_) {
      if (until <= step) {
        free_.push_back(slot);
      } else {
        held_[kept++] = {until, slot};
      }
    }
    held_.resize(kept);
  }

  bool has_held() const { return !held_.empty(); }
  size_t num_free() const { return free_.size(); }
  size_t num_held() const { return held_.size(); }

 private:
  std::vector<uint32_t> free_;
  // (last step that may read the slot, slot).
  std::vector<std::pair<uint64_t, uint32_t>> held_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_SLOT_RECYCLER_H_

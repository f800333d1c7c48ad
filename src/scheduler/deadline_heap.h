// File: src/scheduler/deadline_heap.h
//
// DeadlineHeap: the requests' finite deadlines, earliest first (ties by
// request id, so that expiry order is deterministic). An entry is never
// removed when its request ends or its deadline moves: the scheduler checks
// each popped entry against the request's current deadline and skips stale
// ones, which costs less than finding the entry. Engine thread only.

#ifndef HEARTH_SRC_SCHEDULER_DEADLINE_HEAP_H_
#define HEARTH_SRC_SCHEDULER_DEADLINE_HEAP_H_

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "hearth/common/ids.h"

namespace hearth::internal {

class DeadlineHeap {
 public:
  using Entry = std::pair<absl::Time, RequestId>;

  // Watches `id` until `t`; an infinite `t` is never due and is not kept.
  // O(log n).
  void Watch(absl::Time t, RequestId id) {
    if (t == absl::InfiniteFuture()) return;
    heap_.emplace_back(t, id);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }

  // The earliest entry due at `now` (deadline <= now), removed, or none.
  // O(log n).
  std::optional<Entry> PopDue(absl::Time now) {
    if (heap_.empty() || heap_.front().first > now) return std::nullopt;
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Entry due = heap_.back();
    heap_.pop_back();
    return due;
  }

  size_t size() const { return heap_.size(); }
  // The earliest watched time, or InfiniteFuture() when none.
  absl::Time earliest() const {
    return heap_.empty() ? absl::InfiniteFuture() : heap_.front().first;
  }

 private:
  // Min-heap order: the later entry sinks.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.first > b.first || (a.first == b.first && a.second > b.second);
    }
  };
  std::vector<Entry> heap_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_DEADLINE_HEAP_H_

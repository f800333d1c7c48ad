// File: src/policy/internal/group_heap.h
//
// An indexed binary heap over small dense integers (the groups of one policy
// node: its users, classes). Unlike std::priority_queue it can erase any
// member and restore order after a member's key changed, each in O(log n),
// and it allocates only when it grows past its largest size so far, which
// keeps per-step work (re-keying users as their counters grow) free of
// allocation.
//
// `Less(a, b)` must be a strict weak order; the top is the member no other
// member is Less than.

#ifndef HEARTH_SRC_POLICY_INTERNAL_GROUP_HEAP_H_
#define HEARTH_SRC_POLICY_INTERNAL_GROUP_HEAP_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace hearth::policy_internal {

template <typename Less>
class GroupHeap {
 public:
  explicit GroupHeap(Less less) : less_(std::move(less)) {}

  bool empty() const { return heap_.empty(); }
  int32_t size() const { return static_cast<int32_t>(heap_.size()); }
  bool Contains(int32_t member) const {
    return member < static_cast<int32_t>(pos_.size()) && pos_[member] >= 0;
  }
  // REQUIRES: !empty().
  int32_t Top() const { return heap_.front(); }
  // Members in heap order (for visiting all of them; not sorted).
  absl::Span<const int32_t> members() const { return heap_; }

  // REQUIRES: !Contains(member), member >= 0.
  void Push(int32_t member) {
    if (member >= static_cast<int32_t>(pos_.size())) pos_.resize(member + 1, -1);
    pos_[member] = size();
    heap_.push_back(member);
    SiftUp(size() - 1);
  }

  // No-op when absent.
  void Erase(int32_t member) {
    if (!Contains(member)) return;
    int32_t at = pos_[member];
    int32_t last = size() - 1;
    Swap(at, last);
    heap_.pop_back();
    pos_[member] = -1;
    if (at < size()) Fix(at);
  }

  // Restores order after `member`'s key changed. No-op when absent.
  void Update(int32_t member) {
    if (Contains(member)) Fix(pos_[member]);
  }

 private:
  void Fix(int32_t at) {
    if (at > 0 && less_(heap_[at], heap_[(at - 1) / 2])) {
      SiftUp(at);
    } else {
      SiftDown(at);
    }
  }
  void SiftUp(int32_t at) {
    while (at > 0) {
      int32_t parent = (at - 1) / 2;
      if (!less_(heap_[at], heap_[parent])) break;
      Swap(at, parent);
      at = parent;
    }
  }
  void SiftDown(int32_t at) {
    for (;;) {
      int32_t best = at;
      int32_t left = 2 * at + 1;
      int32_t right = left + 1;
      if (left < size() && less_(heap_[left], heap_[best])) best = left;
      if (right < size() && less_(heap_[right], heap_[best])) best = right;
      if (best == at) return;
      Swap(at, best);
      at = best;
    }
  }
  void Swap(int32_t a, int32_t b) {
    std::swap(heap_[a], heap_[b]);
    pos_[heap_[a]] = a;
    pos_[heap_[b]] = b;
  }

  Less less_;
  std::vector<int32_t> heap_;
  // Index into heap_ per member, -1 when absent.
  std::vector<int32_t> pos_;
};

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_INTERNAL_GROUP_HEAP_H_

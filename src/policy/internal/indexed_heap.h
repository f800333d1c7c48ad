// File: src/policy/internal/indexed_heap.h
//
// A binary heap that knows where each member sits, so it can erase any
// member and restore order after a member's key changed, each in O(log n),
// which std::priority_queue cannot. It allocates only when it grows past its
// largest size so far, so per-step work (re-keying users as their counters
// grow, moving MLFQ jobs between levels) does not allocate.
//
// `Less(a, b)` must be a strict weak order; the top is the member no other
// member is Less than. `Positions` records each member's index in the heap:
//   int32_t Get(const T& member) const;   // -1 when absent
//   void Set(const T& member, int32_t at);
// so a member's position can live wherever the caller keeps per-member state
// (DensePositions below keeps it in the heap, for small dense integers).

#ifndef HEARTH_SRC_POLICY_INTERNAL_INDEXED_HEAP_H_
#define HEARTH_SRC_POLICY_INTERNAL_INDEXED_HEAP_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace hearth::policy_internal {

template <typename T, typename Less, typename Positions>
class IndexedHeap {
 public:
  IndexedHeap(Less less, Positions positions)
      : less_(std::move(less)), positions_(std::move(positions)) {}

  bool empty() const { return heap_.empty(); }
  int32_t size() const { return static_cast<int32_t>(heap_.size()); }
  // REQUIRES: !empty().
  const T& Top() const { return heap_.front(); }
  // Members in heap order (for visiting all of them; not sorted).
  absl::Span<const T> members() const { return heap_; }

  // Room for `n` members without allocating.
  int32_t capacity() const { return static_cast<int32_t>(heap_.capacity()); }
  void Reserve(int32_t n) { heap_.reserve(n); }

  // REQUIRES: `member` is not in the heap.
  void Push(T member) {
    positions_.Set(member, size());
    heap_.push_back(std::move(member));
    SiftUp(size() - 1);
  }

  // No-op when absent.
  void Erase(const T& member) {
    const int32_t at = positions_.Get(member);
    if (at < 0) return;
    const int32_t last = size() - 1;
    Swap(at, last);
    positions_.Set(heap_.back(), -1);
    heap_.pop_back();
    if (at < size()) Fix(at);
  }

  // Restores order after `member`'s key changed. No-op when absent.
  void Update(const T& member) {
    const int32_t at = positions_.Get(member);
    if (at >= 0) Fix(at);
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
    positions_.Set(heap_[a], a);
    positions_.Set(heap_[b], b);
  }

  Less less_;
  Positions positions_;
  std::vector<T> heap_;
};

// Positions of small dense non-negative integers (the groups of one policy
// node: its users, classes), kept in a vector that grows with the largest
// member seen.
class DensePositions {
 public:
  int32_t Get(int32_t member) const {
    return member < static_cast<int32_t>(pos_.size()) ? pos_[member] : -1;
  }
  void Set(int32_t member, int32_t at) {
    if (member >= static_cast<int32_t>(pos_.size())) pos_.resize(member + 1, -1);
    pos_[member] = at;
  }

 private:
  std::vector<int32_t> pos_;
};

// A heap of group indices (see DensePositions).
template <typename Less>
class GroupHeap : public IndexedHeap<int32_t, Less, DensePositions> {
 public:
  explicit GroupHeap(Less less)
      : IndexedHeap<int32_t, Less, DensePositions>(std::move(less),
                                                   DensePositions()) {}
};

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_INTERNAL_INDEXED_HEAP_H_

// File: src/policy/internal/arrival_order_queue.h
//
// First come, first served over waiting and running requests: the one
// implementation of arrival order, used by the standalone FIFO policy
// (keyed by arrival sequence) and by the arrival-order leaf of policy trees
// (keyed by rank time, then arrival sequence). The order is fixed when a
// request arrives, so a preempted request keeps its place, and because it is
// one total order, taking victims only from behind the beneficiary cannot
// cycle.
//
// `Key` must be totally ordered and unique per request; `Value` is what the
// caller gets back, and `Value{}` means none. Every operation is O(log n).

#ifndef HEARTH_SRC_POLICY_INTERNAL_ARRIVAL_ORDER_QUEUE_H_
#define HEARTH_SRC_POLICY_INTERNAL_ARRIVAL_ORDER_QUEUE_H_

#include "absl/container/btree_map.h"

namespace hearth::policy_internal {

template <typename Key, typename Value>
class ArrivalOrderQueue {
 public:
  void AddWaiting(const Key& key, Value value) { waiting_.emplace(key, value); }
  void RemoveWaiting(const Key& key) { waiting_.erase(key); }
  void AddRunning(const Key& key, Value value) { running_.emplace(key, value); }
  void RemoveRunning(const Key& key) { running_.erase(key); }

  // The earliest waiting request.
  Value FirstWaiting() const {
    return waiting_.empty() ? Value{} : waiting_.begin()->second;
  }
  // The earliest waiting request that arrived after `key`.
  Value FirstWaitingAfter(const Key& key) const {
    auto it = waiting_.upper_bound(key);
    return it == waiting_.end() ? Value{} : it->second;
  }
  // The latest running request: the one arrival order values least.
  Value LatestRunning() const {
    return running_.empty() ? Value{} : running_.rbegin()->second;
  }
  // The latest running request if it arrived after `key`: the only victim
  // arrival order allows for the request at `key`.
  Value LatestRunningAfter(const Key& key) const {
    if (running_.empty() || !(key < running_.rbegin()->first)) return Value{};
    return running_.rbegin()->second;
  }
  // The latest running requests that arrived after `key`, latest first, as
  // many as fit `out`; returns how many. O(log n + out.size()).
  template <typename Out>
  size_t LatestRunningAfter(const Key& key, Out out) const {
    size_t n = 0;
    for (auto it = running_.rbegin(); it != running_.rend() && n < out.size(); ++it) {
      if (!(key < it->first)) break;
      out[n++] = it->second;
    }
    return n;
  }

 private:
  absl::btree_map<Key, Value> waiting_;
  absl::btree_map<Key, Value> running_;
};

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_INTERNAL_ARRIVAL_ORDER_QUEUE_H_

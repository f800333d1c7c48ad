// File: src/policy/internal/arrival_order_node.cc
//
// The FIFO leaf of policy trees: requests by rank time (arrival, moved
// earlier for calls of running workflows; see Entry::rank_time), then arrival
// order. A preempted request keeps its original place
// because the order is fixed at arrival, not the time it last became waiting;
// and because it is a fixed total order, growth preemption (later victims
// only) cannot cycle.

#include <memory>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/time/time.h"
#include "policy/internal/policy_node.h"

namespace hearth::policy_internal {
namespace {

class ArrivalOrderNode final : public Node {
 public:
  void AddWaiting(Entry* e, bool fresh) override {
    waiting_.emplace(Key(e), e);
  }
  void RemoveWaiting(Entry* e, bool for_good) override {
    if (!e->declined) waiting_.erase(Key(e));
  }
  void AddRunning(Entry* e) override { running_.emplace(Key(e), e); }
  void RemoveRunning(Entry* e) override { running_.erase(Key(e)); }
  void Charge(Entry*, int32_t, int32_t, int32_t) override {}
  void Reserve(Entry*, int32_t) override {}
  void Flush() override {}
  bool NeedsCharges() const override { return false; }
  void Advance(absl::Time) override {}

  Entry* Best() override {
    return waiting_.empty() ? nullptr : waiting_.begin()->second;
  }

  Entry* Victim(const Entry* beneficiary, bool beneficiary_running) override {
    if (running_.empty()) return nullptr;
    Entry* latest = running_.rbegin()->second;
    if (beneficiary == nullptr) return latest;
    // Within one FIFO queue only a running request may displace, and only
    // one ranked after itself.
    if (!beneficiary_running) return nullptr;
    if (Key(latest) <= Key(beneficiary)) return nullptr;
    return latest;
  }

 private:
  using KeyType = std::pair<absl::Time, uint64_t>;
  static KeyType Key(const Entry* e) { return {e->rank_time, e->arrival_seq}; }

  // Offerable waiting entries and running entries, by (rank time, arrival).
  absl::btree_map<KeyType, Entry*> waiting_;
  absl::btree_map<KeyType, Entry*> running_;
};

}  // namespace

std::unique_ptr<Node> NewArrivalOrderNode() {
  return std::make_unique<ArrivalOrderNode>();
}

}  // namespace hearth::policy_internal

// File: src/policy/internal/arrival_order_node.cc
//
// The FIFO leaf of policy trees: requests in arrival order. A preempted
// request keeps its original place because the order is the arrival sequence,
// not the time it last became waiting.

#include <memory>

#include "absl/container/btree_map.h"
#include "policy/internal/policy_node.h"

namespace hearth::policy_internal {
namespace {

class ArrivalOrderNode final : public Node {
 public:
  void AddWaiting(Entry* e, bool fresh) override {
    waiting_.emplace(e->arrival_seq, e);
  }
  void RemoveWaiting(Entry* e, bool for_good) override {
    if (!e->declined) waiting_.erase(e->arrival_seq);
  }
  void AddRunning(Entry* e) override { running_.emplace(e->arrival_seq, e); }
  void RemoveRunning(Entry* e) override { running_.erase(e->arrival_seq); }
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
    // one that arrived later than itself.
    if (!beneficiary_running) return nullptr;
    if (latest->arrival_seq <= beneficiary->arrival_seq) return nullptr;
    return latest;
  }

 private:
  // Offerable waiting entries and running entries, by arrival sequence.
  absl::btree_map<uint64_t, Entry*> waiting_;
  absl::btree_map<uint64_t, Entry*> running_;
};

}  // namespace

std::unique_ptr<Node> NewArrivalOrderNode() {
  return std::make_unique<ArrivalOrderNode>();
}

}  // namespace hearth::policy_internal

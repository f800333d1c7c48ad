// File: src/policy/nodes/arrival_order_node.cc

#include "policy/nodes/arrival_order_node.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/time/time.h"
#include "policy/internal/arrival_order_queue.h"

namespace hearth::policy_internal {
namespace {

class ArrivalOrderNode final : public Node {
 public:
  void AddWaiting(Entry* e, Offer) override { queue_.AddWaiting(Key(e), e); }
  void RemoveWaiting(Entry* e, bool for_good) override {
    if (!e->declined) queue_.RemoveWaiting(Key(e));
  }
  void AddRunning(Entry* e) override { queue_.AddRunning(Key(e), e); }
  void RemoveRunning(Entry* e) override { queue_.RemoveRunning(Key(e)); }
  void Charge(Entry*, int32_t, int32_t, int32_t) override {}
  void Reserve(Entry*, int32_t) override {}
  void Flush() override {}
  bool NeedsCharges() const override { return false; }
  void Advance(absl::Time) override {}

  Entry* Best() override { return queue_.FirstWaiting(); }

  Entry* Victim(const Entry* beneficiary, bool beneficiary_running) override {
    if (beneficiary == nullptr) return queue_.LatestRunning();
    // Within one arrival-ordered queue only a running request may displace,
    // and only one ranked after itself.
    if (!beneficiary_running) return nullptr;
    return queue_.LatestRunningAfter(Key(beneficiary));
  }
  size_t Victims(const Entry* beneficiary, bool beneficiary_running,
                 absl::Span<Entry*> out) override {
    if (beneficiary == nullptr) return queue_.LatestRunningAfter(kFirst, out);
    if (!beneficiary_running) return 0;
    return queue_.LatestRunningAfter(Key(beneficiary), out);
  }

 private:
  using KeyType = std::pair<absl::Time, uint64_t>;
  static KeyType Key(const Entry* e) { return {e->rank_time, e->arrival_seq}; }
  // Before every request's key.
  static constexpr KeyType kFirst = {absl::InfinitePast(), 0};

  ArrivalOrderQueue<KeyType, Entry*> queue_;
};

}  // namespace

std::unique_ptr<Node> NewArrivalOrderNode() {
  return std::make_unique<ArrivalOrderNode>();
}

}  // namespace hearth::policy_internal

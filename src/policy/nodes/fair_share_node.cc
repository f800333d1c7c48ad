// File: src/policy/nodes/fair_share_node.cc
//
// Three heaps over the groups, all keyed by the group's counter, keep every
// decision O(log groups): groups with offerable requests (admission picks the
// smallest), groups with any waiting request (the lift rule reads the
// smallest), and groups with running requests (the victim comes from the
// largest). A counter grows only when its group is served, and each charge
// re-keys that group in the heaps it is in.

#include "policy/nodes/fair_share_node.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hearth/policy/policy.h"
#include "policy/internal/indexed_heap.h"

namespace hearth::policy_internal {
namespace {

struct Group {
  std::unique_ptr<Node> child;
  double weight = 1.0;
  double inverse_weight = 1.0;
  double counter = 0;
  // This group's share of the last ChargeDecodes batch: its entries, for a
  // child that is charged, and how many.
  std::vector<Entry*> decode_batch;
  int32_t decodes = 0;
  // Waiting entries (offerable or hidden), offerable ones, running ones.
  int32_t waiting = 0;
  int32_t offerable = 0;
  int32_t running = 0;
  // Charged since the last Flush().
  bool dirty = false;
};

class FairShareNode final : public Node {
 public:
  FairShareNode(FairShareParams params, NodeFactory child)
      : params_(std::move(params)),
        child_factory_(std::move(child)),
        offer_(Smaller{&groups_}),
        backlog_(Smaller{&groups_}),
        running_(Larger{&groups_}) {}

  void AddWaiting(Entry* e, Offer why) override {
    int32_t g = GroupOf(e);
    Group& group = groups_[g];
    if (why != Offer::kReoffered) {
      if (group.waiting == 0) {
        // A request moved here is not new demand: lifting its group would
        // move the counter only because it left the tree for a moment.
        if (why != Offer::kChanged) Lift(g);
        backlog_.Push(g);
      }
      ++group.waiting;
    }
    if (group.offerable++ == 0) offer_.Push(g);
    group.child->AddWaiting(e, why);
  }

  void RemoveWaiting(Entry* e, bool for_good) override {
    int32_t g = GroupOf(e);
    Group& group = groups_[g];
    if (!e->declined && --group.offerable == 0) offer_.Erase(g);
    if (for_good && --group.waiting == 0) backlog_.Erase(g);
    group.child->RemoveWaiting(e, for_good);
  }

  void AddRunning(Entry* e) override {
    int32_t g = GroupOf(e);
    if (groups_[g].running++ == 0) running_.Push(g);
    last_admitted_ = g;
    groups_[g].child->AddRunning(e);
  }

  void RemoveRunning(Entry* e) override {
    int32_t g = GroupOf(e);
    if (--groups_[g].running == 0) running_.Erase(g);
    groups_[g].child->RemoveRunning(e);
  }

  // Per step and entry: a counter add. Heaps are re-keyed in Flush(), once
  // per charged group.
  void Charge(Entry* e, int32_t prefill_tokens, int32_t decode_tokens,
              int32_t prepaid) override {
    Group& group = ChargeGroup(e, (prefill_tokens - prepaid) * params_.prompt_token_weight +
                                      decode_tokens * params_.decode_token_weight);
    if (child_charges_) {
      group.child->Charge(e, prefill_tokens, decode_tokens, prepaid);
    }
  }

  // Counts each group's decodes (kept for a repeated batch), then charges
  // each group once for all of them, as ChargeGroup charges a request's
  // tokens: one product per group, not one add per decode waiting on the
  // add before it.
  void ChargeDecodes(absl::Span<Entry* const> entries, bool repeat) override {
    if (!repeat) SplitDecodes(entries);
    for (int32_t g : decoded_) {
      Group& group = groups_[g];
      group.counter += params_.decode_token_weight * group.decodes * group.inverse_weight;
      MarkDirty(g);
      if (child_charges_) group.child->ChargeDecodes(group.decode_batch, repeat);
    }
  }

  void Flush() override {
    for (int32_t g : dirty_) {
      groups_[g].dirty = false;
      offer_.Update(g);
      backlog_.Update(g);
      running_.Update(g);
      if (child_charges_) groups_[g].child->Flush();
    }
    dirty_.clear();
  }

  void Reserve(Entry* e, int32_t tokens) override {
    AddToCounter(e, tokens * params_.prompt_token_weight);
    groups_[GroupOf(e)].child->Reserve(e, tokens);
  }

  void Advance(absl::Time now) override {
    for (int32_t g : backlog_.members()) groups_[g].child->Advance(now);
  }

  Entry* Best() override {
    if (offer_.empty()) return nullptr;
    return groups_[offer_.Top()].child->Best();
  }

  Entry* Victim(const Entry* beneficiary, bool beneficiary_running) override {
    Entry* out[1];
    return Victims(beneficiary, beneficiary_running, out) > 0 ? out[0] : nullptr;
  }

  // From the group with the largest counter, the entries whose eviction
  // costs less than that group's lead over the beneficiary's (CostOf), so
  // that a preemption never hands the lead back and two users cannot evict
  // each other in turns; otherwise the beneficiary's own group decides
  // within itself.
  size_t Victims(const Entry* beneficiary, bool beneficiary_running,
                 absl::Span<Entry*> out) override {
    if (running_.empty() || out.empty()) return 0;
    const int32_t top = running_.Top();
    if (beneficiary == nullptr) return groups_[top].child->Victims(nullptr, false, out);
    const int32_t own = GroupOf(beneficiary);
    if (top != own && (beneficiary_running || params_.preempt_for_admission)) {
      const double lead = groups_[top].counter - groups_[own].counter;
      const double floor = beneficiary_running ? 0 : params_.admission_preemption_gap;
      Entry* found[kMaxVictimCandidates];
      const size_t listed = groups_[top].child->Victims(
          nullptr, false, absl::MakeSpan(found, std::min(out.size(), std::size(found))));
      size_t n = 0;
      for (size_t i = 0; i < listed; ++i) {
        if (lead > std::max(floor, CostOf(top, found[i]))) out[n++] = found[i];
      }
      if (n > 0) return n;
    }
    if (groups_[own].running == 0) return 0;
    return groups_[own].child->Victims(beneficiary, beneficiary_running, out);
  }

 private:
  // Heap orders: counter, then group index, for determinism.
  struct Smaller {
    const std::vector<Group>* groups;
    bool operator()(int32_t a, int32_t b) const {
      double ca = (*groups)[a].counter, cb = (*groups)[b].counter;
      return ca < cb || (ca == cb && a < b);
    }
  };
  struct Larger {
    const std::vector<Group>* groups;
    bool operator()(int32_t a, int32_t b) const {
      double ca = (*groups)[a].counter, cb = (*groups)[b].counter;
      return ca > cb || (ca == cb && a < b);
    }
  };

  // What evicting `e` of group `g` costs its group's lead, in counter
  // units: the positions it would recompute, and the admission charge for
  // its unserved prefill, which preemption refunds.
  double CostOf(int32_t g, const Entry* e) const {
    return (e->position + e->reserved_prefill) * params_.prompt_token_weight *
           groups_[g].inverse_weight;
  }

  uint32_t KeyOf(const Entry* e) const {
    return params_.key == ShareKey::kUser ? e->user.value()
                                          : e->work_class.value();
  }

  int32_t GroupOf(const Entry* e) {
    int32_t& slot = e->share_slot[static_cast<int>(params_.key)];
    if (slot < 0) slot = FindOrAddGroup(e);
    return slot;
  }

  int32_t FindOrAddGroup(const Entry* e) {
    uint32_t key = KeyOf(e);
    auto [it, inserted] =
        index_.try_emplace(key, static_cast<int32_t>(groups_.size()));
    if (inserted) {
      Group& group = groups_.emplace_back();
      group.weight = key < params_.weights.size() ? params_.weights[key] : 1.0;
      group.inverse_weight = 1.0 / group.weight;
      group.child = child_factory_();
      child_charges_ = group.child->NeedsCharges();
    }
    return it->second;
  }

  // Counts a ChargeDecodes batch by group, in order of first appearance,
  // and splits it between the groups' children when they are charged.
  void SplitDecodes(absl::Span<Entry* const> entries) {
    for (int32_t g : decoded_) {
      groups_[g].decodes = 0;
      groups_[g].decode_batch.clear();
    }
    decoded_.clear();
    for (Entry* e : entries) {
      const int32_t g = GroupOf(e);
      Group& group = groups_[g];
      if (group.decodes++ == 0) decoded_.push_back(g);
      if (child_charges_) group.decode_batch.push_back(e);
    }
  }

  // Adds service to `e`'s group; its heaps are re-keyed in Flush().
  Group& ChargeGroup(const Entry* e, double charge) {
    const int32_t g = GroupOf(e);
    Group& group = groups_[g];
    group.counter += charge * group.inverse_weight;
    MarkDirty(g);
    return group;
  }

  void MarkDirty(int32_t g) {
    if (groups_[g].dirty) return;
    groups_[g].dirty = true;
    dirty_.push_back(g);
  }

  void AddToCounter(const Entry* e, double charge) {
    if (charge == 0) return;
    const int32_t g = GroupOf(e);
    SetCounter(g, groups_[g].counter + charge / groups_[g].weight);
  }

  // Changes a counter outside the Charge/Flush batch: every heap the group
  // sits in is re-keyed at once.
  void SetCounter(int32_t g, double counter) {
    groups_[g].counter = counter;
    offer_.Update(g);
    backlog_.Update(g);
    running_.Update(g);
  }

  // The lift rule: a group that becomes backlogged starts no lower than the
  // least-served backlogged group (or, with none backlogged, the group
  // admitted last), so idle time earns no credit.
  void Lift(int32_t g) {
    double floor;
    if (!backlog_.empty()) {
      floor = groups_[backlog_.Top()].counter;
    } else if (last_admitted_ >= 0) {
      floor = groups_[last_admitted_].counter;
    } else {
      return;
    }
    // The group may be running (only its waiting set was empty), so the
    // running heap must see the new counter too.
    if (floor > groups_[g].counter) SetCounter(g, floor);
  }

  FairShareParams params_;
  NodeFactory child_factory_;
  std::vector<Group> groups_;
  absl::flat_hash_map<uint32_t, int32_t> index_;
  GroupHeap<Smaller> offer_;
  GroupHeap<Smaller> backlog_;
  GroupHeap<Larger> running_;
  int32_t last_admitted_ = -1;
  std::vector<int32_t> dirty_;
  // Groups with decodes in the last ChargeDecodes batch.
  std::vector<int32_t> decoded_;
  bool child_charges_ = true;
};

}  // namespace

std::unique_ptr<Node> NewFairShareNode(FairShareParams params,
                                       NodeFactory child) {
  return std::make_unique<FairShareNode>(std::move(params), std::move(child));
}

}  // namespace hearth::policy_internal

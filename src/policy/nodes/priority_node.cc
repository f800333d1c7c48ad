// File: src/policy/nodes/priority_node.cc
//
// PriorityNode's construction and factories, the tree's events and charges
// passed down to each level's child, and the levels themselves: how an entry
// finds its level, each level's deadline, and the quota windows.
// priority_node_impl.h's file comment states the design and how the class
// is split.

#include "policy/nodes/priority_node_impl.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace hearth::policy_internal {

PriorityNode::PriorityNode(const PriorityQuotaOptions& options,
                           std::vector<int64_t> class_priorities,
                           std::vector<absl::Duration> class_ttft,
                           std::vector<absl::Duration> class_e2e,
                           std::optional<MemberGuard> guard, NodeFactory child)
    : options_(options),
      class_priorities_(std::move(class_priorities)),
      class_ttft_(std::move(class_ttft)),
      class_e2e_(std::move(class_e2e)),
      slo_mode_(!class_ttft_.empty()),
      child_factory_(std::move(child)) {
  for (const LevelQuota& q : options.quotas) quotas_[q.priority] = q;
  has_quotas_ = !options.quotas.empty();
  if (guard.has_value() && slo_mode_) {
    ledger_ = std::make_unique<MemberLedger>(std::move(guard->ledger));
    guard_gap_ = guard->gap;
  }
}

void PriorityNode::AddWaiting(Entry* e, Offer why) {
  Level& level = LevelOf(e);
  level.oldest.emplace(OldKey(e), e);
  if (ledger_ != nullptr && why != Offer::kReoffered) {
    ledger_->AddWaiting(e, why != Offer::kChanged);
  }
  level.child->AddWaiting(e, why);
}

void PriorityNode::RemoveWaiting(Entry* e, bool for_good) {
  Level& level = LevelOf(e);
  if (!e->declined) level.oldest.erase(OldKey(e));
  if (ledger_ != nullptr && for_good) ledger_->RemoveWaiting(e);
  level.child->RemoveWaiting(e, for_good);
}

void PriorityNode::AddRunning(Entry* e) {
  Level& level = LevelOf(e);
  running_.emplace(RunKey(e), e);
  if (ledger_ != nullptr) ledger_->AddRunning(e);
  level.child->AddRunning(e);
}

void PriorityNode::RemoveRunning(Entry* e) {
  Level& level = LevelOf(e);
  running_.erase(RunKey(e));
  if (ledger_ != nullptr) ledger_->RemoveRunning(e);
  level.child->RemoveRunning(e);
}

void PriorityNode::Charge(Entry* e, int32_t prefill_tokens, int32_t decode_tokens,
                          int32_t prepaid) {
  if (ledger_ != nullptr) ledger_->Charge(e, prefill_tokens, decode_tokens, prepaid);
  if (!has_quotas_ && !child_charges_) return;
  Level& level = LevelOf(e);
  CountServed(level, prefill_tokens - prepaid + decode_tokens);
  if (child_charges_) {
    level.child->Charge(e, prefill_tokens, decode_tokens, prepaid);
  }
}

// Served tokens are counted per level batch, not per entry: one shared
// running total bumped per entry was a store-to-load chain through the
// whole batch. The split into levels is kept for a repeated batch.
void PriorityNode::ChargeDecodes(absl::Span<Entry* const> entries, bool repeat) {
  if (ledger_ != nullptr) ledger_->ChargeDecodes(entries, repeat);
  if (!has_quotas_ && !child_charges_) return;
  if (!repeat) SplitDecodes(entries);
  for (int32_t slot : batched_levels_) {
    Level& level = levels_[slot];
    CountServed(level, static_cast<int64_t>(level.decode_batch.size()));
    if (child_charges_) level.child->ChargeDecodes(level.decode_batch, repeat);
  }
}

// Admissions count against the quota at once, so one admission phase
// cannot overshoot it; refunds never make a window's count negative.
void PriorityNode::Reserve(Entry* e, int32_t tokens) {
  if (ledger_ != nullptr) ledger_->Reserve(e, tokens);
  Level& level = LevelOf(e);
  level.served_in_window = std::max<int64_t>(0, level.served_in_window + tokens);
  total_in_window_ = std::max<int64_t>(0, total_in_window_ + tokens);
  level.child->Reserve(e, tokens);
}

void PriorityNode::Flush() {
  if (ledger_ != nullptr) ledger_->Flush();
  if (!child_charges_) return;
  for (Level& level : levels_) level.child->Flush();
}

void PriorityNode::Advance(absl::Time now) {
  now_ = now;
  if (ledger_ != nullptr) ledger_->Advance(now);
  RollWindow(now);
  for (Level& level : levels_) {
    if (!level.oldest.empty()) level.child->Advance(now);
  }
}

// Splits a ChargeDecodes batch into its levels' decode_batch, in order.
void PriorityNode::SplitDecodes(absl::Span<Entry* const> entries) {
  for (int32_t slot : batched_levels_) levels_[slot].decode_batch.clear();
  batched_levels_.clear();
  for (Entry* e : entries) {
    const int32_t slot = LevelSlot(e);
    Level& level = levels_[slot];
    if (level.decode_batch.empty()) batched_levels_.push_back(slot);
    level.decode_batch.push_back(e);
  }
}

void PriorityNode::RollWindow(absl::Time now) {
  if (window_start_ == absl::InfinitePast()) window_start_ = now;
  if (now - window_start_ < options_.quota_window) return;
  absl::Duration remainder;
  int64_t windows =
      absl::IDivDuration(now - window_start_, options_.quota_window, &remainder);
  window_start_ += options_.quota_window * windows;
  for (Level& level : levels_) level.served_in_window = 0;
  total_in_window_ = 0;
}

int32_t PriorityNode::FindOrAddLevel(const Entry* e) {
  const size_t cls = e->work_class.value();
  const int64_t priority =
      (cls < class_priorities_.size() ? class_priorities_[cls] : 0) + int64_t{e->priority};
  // SLO mode: one level per class (its target), the request's own
  // priority only choosing the quota.
  const int64_t key =
      slo_mode_ ? static_cast<int64_t>(cls) * 2 + (HasTarget(e) ? 0 : 1) : priority;
  auto [it, inserted] = index_.try_emplace(key, static_cast<int32_t>(levels_.size()));
  if (inserted) {
    Level& level = levels_.emplace_back();
    level.priority = priority;
    if (slo_mode_) SetDeadline(level, HasTarget(e), cls);
    auto quota = quotas_.find(priority);
    if (quota != quotas_.end()) {
      level.quota = quota->second.tokens_per_window;
      level.max_share = quota->second.max_share;
    }
    level.child = child_factory_();
    child_charges_ = level.child->NeedsCharges();
  }
  return it->second;
}

void PriorityNode::SetDeadline(Level& level, bool has_target, size_t cls) const {
  level.background = !has_target;
  if (!level.background) {
    level.deadline_offset = absl::ZeroDuration();  // Each entry's own target.
    return;
  }
  level.completion = cls < class_e2e_.size() ? class_e2e_[cls] : absl::InfiniteDuration();
  if (options_.aging_interval != absl::InfiniteDuration()) {
    level.deadline_offset = options_.aging_interval;
  } else {
    level.tier = 1;
  }
}
std::unique_ptr<Node> NewPriorityNode(const PriorityQuotaOptions& options,
                                      std::vector<int64_t> class_priorities,
                                      NodeFactory child) {
  return std::make_unique<PriorityNode>(options, std::move(class_priorities),
                                        std::vector<absl::Duration>(),
                                        std::vector<absl::Duration>(), std::nullopt,
                                        std::move(child));
}

std::unique_ptr<Node> NewSloClassNode(const PriorityQuotaOptions& options,
                                      std::vector<int64_t> class_priorities,
                                      std::vector<absl::Duration> class_ttft,
                                      std::vector<absl::Duration> class_e2e,
                                      std::optional<MemberGuard> guard, NodeFactory child) {
  // An empty list would select priority mode: one background class instead.
  if (class_ttft.empty()) class_ttft.push_back(absl::InfiniteDuration());
  return std::make_unique<PriorityNode>(options, std::move(class_priorities),
                                        std::move(class_ttft), std::move(class_e2e),
                                        std::move(guard), std::move(child));
}

}  // namespace hearth::policy_internal

// File: src/policy/tree/tree_policy.cc
//
// TreePolicy's request events, arrival to change, which enter, move and
// retire entries in the tree, and the entry pool they are drawn from
// (tree_policy_impl.h says how the class is split).

#include "policy/tree/tree_policy_impl.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace hearth::policy_internal {

void TreePolicy::OnArrival(const RequestView& request, absl::Time now) {
  if (auto it = entries_.find(request.id); it != entries_.end()) {
    Entry* old = it->second;
    if (!old->retired) return;
    // Removed and back before the next OnServed freed its entry (the core
    // moves a waiting request whose model was unloaded back to model
    // preparation, and re-announces it once the model is loaded): start
    // afresh.
    retired_.erase(std::find(retired_.begin(), retired_.end(), old));
    Release(old);
  }
  Entry* e = Allocate();
  e->id = request.id;
  e->user = request.user;
  e->work_class = request.work_class;
  e->priority = request.priority;
  e->prompt_tokens = request.prompt_tokens;
  e->predicted_output_tokens = request.predicted_output.expected_tokens;
  e->arrival_seq = request.arrival_seq;
  e->rank_time = request.arrival_time;
  if (request.workflow.valid() && request.workflow != request.id) {
    e->rank_time = std::max(request.workflow_arrival_time,
                            request.arrival_time - head_start_);
  }
  e->arrival_time = request.arrival_time;
  e->ttft_slo = request.ttft_slo;
  e->waiting_since = now;
  entries_.emplace(request.id, e);
  root_->AddWaiting(e, Offer::kArrived);
}

void TreePolicy::OnAdmitted(const RequestView& request, absl::Time now) {
  Entry* e = FindOffered(request.id);
  if (e == nullptr || e->running || e->retired) return;
  LeaveWaiting(e);
  e->running = true;
  e->position = request.computed_tokens;
  root_->AddRunning(e);
  // Reserve the prefill this admission commits to, so that the next
  // candidate (of this phase and of the phases while it is prefilled)
  // already sees it, as VTC charges a prompt at admission; OnServed
  // settles it chunk by chunk. Positions charged before a recompute
  // preemption are not reserved again.
  int32_t target = request.length() - (request.output_tokens > 0 ? 1 : 0);
  e->reserved_prefill = std::max(0, target - std::max(request.computed_tokens, e->charged_upto));
  if (e->reserved_prefill > 0) root_->Reserve(e, e->reserved_prefill);
}

void TreePolicy::OnPreempted(const RequestView& request, absl::Time now) {
  Entry* e = Find(request.id);
  if (e == nullptr || !e->running) return;
  Refund(e);
  root_->RemoveRunning(e);
  e->running = false;
  // Recompute drops the positions (charged_upto remembers them), swap
  // keeps them.
  e->position = request.computed_tokens;
  e->waiting_since = now;
  root_->AddWaiting(e, Offer::kPreempted);
}

void TreePolicy::OnRemoved(const RequestView& request, absl::Time now) {
  Entry* e = Find(request.id);
  if (e == nullptr || e->retired) return;
  if (e->running) {
    Refund(e);
    root_->RemoveRunning(e);
    e->running = false;
  } else {
    LeaveWaiting(e);
  }
  // The core may report a request's last step (OnServed) after removing
  // it; keep the entry until then so that service is still charged.
  e->retired = true;
  retired_.push_back(e);
}

// The entry leaves the tree under its old priority and class and enters
// it again under the new ones (a running one as if admitted at once):
// nodes keep per-entry state by the path an entry took, and a new class
// may be a new subtree. Offer::kChanged keeps what it earned (its arrival
// time, workflow rank, MLFQ level and attained service, the service
// charged to it); its reserved prefill moves along with it.
void TreePolicy::OnChanged(const RequestView& request, absl::Time now) {
  Entry* e = Find(request.id);
  if (e == nullptr || e->retired) return;
  const int32_t reserved = e->reserved_prefill;
  if (e->running) {
    Refund(e);
    root_->RemoveRunning(e);
  } else {
    LeaveWaiting(e);
  }
  e->priority = request.priority;
  e->work_class = request.work_class;
  e->ttft_slo = request.ttft_slo;
  e->share_slot[0] = e->share_slot[1] = -1;
  e->level_slot = -1;
  // Nodes may reuse the split of the last decode batch into their groups
  // (ChargeDecodes' `repeat`); this entry's groups are no longer those.
  released_since_charge_ = true;
  root_->AddWaiting(e, Offer::kChanged);
  if (e->running) {
    root_->RemoveWaiting(e, /*for_good=*/true);
    root_->AddRunning(e);
    e->reserved_prefill = reserved;
    if (reserved > 0) root_->Reserve(e, reserved);
  }
}

// Takes a waiting entry (offerable or hidden) out of the waiting set.
void TreePolicy::LeaveWaiting(Entry* e) {
  root_->RemoveWaiting(e, /*for_good=*/true);
  if (e->declined) {
    declined_.erase(std::find(declined_.begin(), declined_.end(), e));
    e->declined = false;
  }
}

// Back to the pool. The id is cleared so that stale cache slots
// (served_prev_, offered_) never match it.
void TreePolicy::Release(Entry* e) {
  entries_.erase(e->id);
  e->id = RequestId();
  free_.push_back(e);
  released_since_charge_ = true;
}

Entry* TreePolicy::Allocate() {
  if (free_.empty()) {
    // Entries come in chunks so that the ones served together sit close.
    const int32_t first = static_cast<int32_t>(pool_.size()) * kChunk;
    pool_.push_back(std::make_unique<Entry[]>(kChunk));
    for (int i = kChunk - 1; i >= 0; --i) {
      pool_.back()[i].index = first + i;
      free_.push_back(&pool_.back()[i]);
    }
  }
  Entry* e = free_.back();
  free_.pop_back();
  const int32_t index = e->index;
  *e = Entry();
  e->index = index;
  return e;
}

std::unique_ptr<Policy> NewTreePolicy(std::string name, std::unique_ptr<Node> root,
                                      const TreePolicyRules& rules) {
  return std::make_unique<TreePolicy>(std::move(name), std::move(root), rules);
}

}  // namespace hearth::policy_internal

// File: src/policy/tree/tree_policy_admission.cc
//
// TreePolicy's admission phase: the next offer, declines hidden until
// EndAdmission, backfill past the head, and the share of memory a candidate
// must leave free (tree_policy_impl.h says how the class is split).

#include "policy/tree/tree_policy_impl.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace hearth::policy_internal {

RequestId TreePolicy::NextAdmission() {
  Entry* e = root_->Best();
  offered_ = e;
  return e == nullptr ? RequestId() : e->id;
}

void TreePolicy::Decline(RequestId id) {
  Entry* e = Find(id);
  if (e == nullptr || e->running || e->declined || e->retired) return;
  root_->RemoveWaiting(e, /*for_good=*/false);
  e->declined = true;
  declined_.push_back(e);
}

// Counted from when the head last started waiting (arrival or preemption):
// past backfill_wait it holds the line until memory frees for it.
bool TreePolicy::MayAdmitPast(const RequestView& head, absl::Time now) {
  if (rules_.backfill_wait <= absl::ZeroDuration()) return false;
  const Entry* e = FindOffered(head.id);
  return e != nullptr && !e->running && now - e->waiting_since < rules_.backfill_wait;
}

PrefillRules TreePolicy::prefill_rules() const {
  return {.by_deadline = rules_.prefills_by_deadline,
          .background_tokens = rules_.background_prefill_tokens};
}

// Background: no TTFT target of its own or its class's. Either reserve
// is waived once the candidate has waited its aging interval, the
// background reserve also once it is due by its class's completion target
// (Node::Due): it must start then, and the reserve would hold it out.
double TreePolicy::AdmissionReserveShare(const RequestView& candidate, absl::Time now) {
  if (now - candidate.arrival_time >= rules_.reserve_waived_after) return 0;
  if (rules_.priority_reserve.share > 0) return PriorityReserveShare(candidate);
  if (candidate.ttft_slo != absl::InfiniteDuration()) return 0;
  const Entry* e = FindOffered(candidate.id);
  return e != nullptr && root_->Due(e) ? 0 : rules_.background_kv_reserve;
}

// Trunk reservation: the share falls linearly from the lowest class
// priority to none at the highest, by the request's level. (Lowering it a
// step per aging interval, as aging raises the level, instead of waiving it
// after one, starved agents and documents at capacity; figures:
// bench/RESULTS.md, "Figures behind the rules".)
double TreePolicy::PriorityReserveShare(const RequestView& candidate) const {
  const TreePolicyRules::PriorityReserve& reserve = rules_.priority_reserve;
  const size_t cls = candidate.work_class.value();
  const int64_t level =
      (cls < reserve.class_priority.size() ? reserve.class_priority[cls] : 0) +
      int64_t{candidate.priority};
  if (level >= reserve.top) return 0;
  const double below = static_cast<double>(reserve.top - std::max(level, reserve.bottom));
  return reserve.share * below / static_cast<double>(reserve.top - reserve.bottom);
}

void TreePolicy::EndAdmission() {
  for (Entry* e : declined_) {
    e->declined = false;
    root_->AddWaiting(e, Offer::kReoffered);
  }
  declined_.clear();
}

}  // namespace hearth::policy_internal

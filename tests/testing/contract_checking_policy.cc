#include "tests/testing/contract_checking_policy.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hearth::testing {

void ContractCheckingPolicy::OnArrival(const RequestView& r, absl::Time now) {
  running_.erase(r.id);
  waiting_.insert(r.id);
  inner_->OnArrival(r, now);
  observer_->Arrived(r);
}

void ContractCheckingPolicy::OnAdmitted(const RequestView& r, absl::Time now) {
  observer_->Admitted(r);
  waiting_.erase(r.id);
  running_.insert(r.id);
  inner_->OnAdmitted(r, now);
}

void ContractCheckingPolicy::OnPreempted(const RequestView& r, absl::Time now) {
  running_.erase(r.id);
  waiting_.insert(r.id);
  if (admitting_) preempted_now_.insert(r.id);
  inner_->OnPreempted(r, now);
  observer_->Preempted(r);
}

void ContractCheckingPolicy::OnRemoved(const RequestView& r, absl::Time now) {
  running_.erase(r.id);
  waiting_.erase(r.id);
  inner_->OnRemoved(r, now);
  observer_->Removed(r);
}

void ContractCheckingPolicy::OnServed(absl::Span<const ServedTokens> served, absl::Time now) {
  inner_->OnServed(served, now);
  observer_->Served(served);
}

void ContractCheckingPolicy::BeginAdmission(absl::Time now) {
  declined_.clear();
  preempted_now_.clear();
  admitting_ = true;
  inner_->BeginAdmission(now);
}

RequestId ContractCheckingPolicy::NextAdmission() {
  const RequestId id = inner_->NextAdmission();
  if (id.valid()) {
    if (!waiting_.contains(id) || declined_.contains(id)) {
      observer_->Violation(absl::StrCat(std::string(inner_->name()), ": offered ", id.ToString(),
                                        ", which is not an undeclined waiting request"));
    }
    return id;
  }
  // A request preempted during this phase is left out: the core never
  // readmits one in the step that preempted it (that would undo the room
  // just made), so not offering it again costs no work.
  size_t undeclined = waiting_.size();
  for (RequestId d : declined_) undeclined -= waiting_.contains(d) ? 1 : 0;
  for (RequestId p : preempted_now_) {
    undeclined -= waiting_.contains(p) && !declined_.contains(p) ? 1 : 0;
  }
  if (undeclined > 0) {
    std::vector<RequestId> left;
    for (RequestId w : waiting_) {
      if (!declined_.contains(w) && !preempted_now_.contains(w)) left.push_back(w);
    }
    std::sort(left.begin(), left.end());
    std::string ids;
    for (size_t i = 0; i < left.size() && i < 4; ++i)
      absl::StrAppend(&ids, " ", left[i].ToString());
    observer_->Violation(absl::StrCat(std::string(inner_->name()), ": no candidate offered while ",
                                      undeclined, " undeclined requests wait:", ids));
  }
  return id;
}

void ContractCheckingPolicy::Decline(RequestId id) {
  ++declines_;
  declined_.insert(id);
  inner_->Decline(id);
}

void ContractCheckingPolicy::EndAdmission() {
  declined_.clear();
  preempted_now_.clear();
  admitting_ = false;
  inner_->EndAdmission();
}

void ContractCheckingPolicy::CheckVictim(RequestId victim, RequestId beneficiary,
                                         std::string_view asked) {
  if (!victim.valid()) return;
  if (victim == beneficiary) {
    observer_->Violation(absl::StrCat(std::string(inner_->name()), ": ", std::string(asked),
                                      " named ", victim.ToString(), " as its own victim"));
  } else if (!running_.contains(victim)) {
    observer_->Violation(absl::StrCat(
        std::string(inner_->name()), ": ", std::string(asked), " named ", victim.ToString(),
        ", which is not running, as the victim for ", beneficiary.ToString()));
  }
}

RequestId ContractCheckingPolicy::ChooseVictim(const VictimRequest& request,
                                               const PreemptionCosts& costs) {
  const RequestId victim = inner_->ChooseVictim(request, costs);
  CheckVictim(victim, request.beneficiary, "ChooseVictim");
  return victim;
}

RequestId ContractCheckingPolicy::PickReclaimVictim(const RequestView& beneficiary,
                                                    absl::Span<const RequestView> borrowers) {
  const RequestId victim = inner_->PickReclaimVictim(beneficiary, borrowers);
  CheckVictim(victim, beneficiary.id, "PickReclaimVictim");
  bool offered = !victim.valid();
  for (const RequestView& b : borrowers) offered = offered || b.id == victim;
  if (!offered) {
    observer_->Violation(absl::StrCat(std::string(inner_->name()), ": PickReclaimVictim named ",
                                      victim.ToString(), ", which is not a borrower offered"));
  }
  return victim;
}

RequestId ContractCheckingPolicy::PickClassLimitVictim(const RequestView& beneficiary) {
  const RequestId victim = inner_->PickClassLimitVictim(beneficiary);
  if (victim != beneficiary.id) CheckVictim(victim, beneficiary.id, "PickClassLimitVictim");
  return victim;
}

}  // namespace hearth::testing

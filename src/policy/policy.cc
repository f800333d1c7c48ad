// File: src/policy/policy.cc
//
// Default victim choices of Policy: the cheapest of its own candidates per
// block freed, reclaim the newest borrower (it has lost the least work to
// recompute), and let a hard-budget class's growing sequence yield itself
// (its classmates' growth is reserved at admission).

#include "hearth/policy/policy.h"

#include <algorithm>

namespace hearth {

RequestId Policy::PickReclaimVictim(const RequestView& beneficiary,
                                    absl::Span<const RequestView> borrowers) {
  // The newest borrower has had the least of the borrowed capacity.
  return borrowers.empty() ? RequestId() : borrowers.back().id;
}

size_t Policy::ShareReclaimCandidates(RequestId, absl::Span<RequestId>) { return 0; }

size_t Policy::VictimCandidates(RequestId beneficiary, bool beneficiary_running,
                                absl::Span<RequestId> out) {
  if (out.empty()) return 0;
  out[0] = PickVictim(beneficiary, beneficiary_running);
  return out[0].valid() ? 1 : 0;
}

RequestId Policy::ChooseVictim(const VictimRequest& request, const PreemptionCosts& costs) {
  RequestId ids[kMaxVictimCandidates];
  const size_t listed =
      request.reason == VictimReason::kMemberShare
          ? ShareReclaimCandidates(request.beneficiary, absl::MakeSpan(ids))
          : VictimCandidates(request.beneficiary, request.beneficiary_running, absl::MakeSpan(ids));
  return CheapestVictim(absl::MakeConstSpan(ids, std::min<size_t>(listed, kMaxVictimCandidates)),
                        request.need_blocks, costs);
}

void Policy::OnChanged(const RequestView& /*request*/, absl::Time /*now*/) {}

bool Policy::MayAdmitPast(const RequestView& /*head*/, absl::Time /*now*/) { return false; }

PrefillRules Policy::prefill_rules() const { return {}; }

double Policy::AdmissionReserveShare(const RequestView& /*candidate*/, absl::Time /*now*/) {
  return 0;
}

RequestId Policy::PickClassLimitVictim(const RequestView& beneficiary) {
  return beneficiary.id;
}

}  // namespace hearth

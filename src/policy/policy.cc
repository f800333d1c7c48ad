// File: src/policy/policy.cc
//
// Default victim choices of Policy: reclaim the newest borrower (it has lost
// the least work to recompute), and let a hard-budget class's growing
// sequence yield itself (its classmates' growth is reserved at admission).

#include "hearth/policy/policy.h"

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

void Policy::OnChanged(const RequestView& /*request*/, absl::Time /*now*/) {}

bool Policy::MayAdmitPast(const RequestView& /*head*/, absl::Time /*now*/) { return false; }

bool Policy::PrefillsByDeadline() const { return false; }

int32_t Policy::BackgroundPrefillTokens() const { return 0; }

double Policy::AdmissionReserveShare(const RequestView& /*candidate*/, absl::Time /*now*/) {
  return 0;
}

RequestId Policy::PickClassLimitVictim(const RequestView& beneficiary) {
  return beneficiary.id;
}

}  // namespace hearth

// File: src/policy/policy.cc
//
// Default victim choices of Policy: the orders the core used before policies
// could choose them, so a policy that does not override them behaves as the
// scheduler always has.

#include "hearth/policy/policy.h"

namespace hearth {

RequestId Policy::PickReclaimVictim(const RequestView& beneficiary,
                                    absl::Span<const RequestView> borrowers) {
  // The newest borrower has had the least of the borrowed capacity.
  return borrowers.empty() ? RequestId() : borrowers.back().id;
}

RequestId Policy::PickClassLimitVictim(const RequestView& beneficiary) {
  return beneficiary.id;
}

}  // namespace hearth

// File: tests/testing/contract_checking_policy.h
//
// A Policy decorator that holds the wrapped policy to its side of the Policy
// contract while the real core drives it, and tells an observer what the
// policy was told. Checked at every call:
//   - a candidate offered by NextAdmission is waiting and not declined in
//     this admission phase;
//   - NextAdmission offers a candidate whenever an undeclined request waits
//     (work conservation), except one preempted in this very phase, which
//     the core would decline;
//   - a victim (ChooseVictim, PickReclaimVictim, PickClassLimitVictim) is
//     running and not the beneficiary, a reclaim victim one of the borrowers
//     offered (a class-limit victim may be the beneficiary itself: that is
//     how the contract says "yield your own blocks").
// Everything else forwards to the wrapped policy unchanged, including the
// calls with defaults (MayAdmitPast, AdmissionReserveShare, prefill_rules),
// so the decorated policy decides exactly as the bare one would.

#ifndef HEARTH_TESTS_TESTING_CONTRACT_CHECKING_POLICY_H_
#define HEARTH_TESTS_TESTING_CONTRACT_CHECKING_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hearth/policy/policy.h"

namespace hearth::testing {

// Told of each event after the policy's own sets moved (Admitted: before
// the request leaves the waiting set, so an observer may still compare it
// with the requests that wait beside it).
class PolicyObserver {
 public:
  virtual ~PolicyObserver() = default;
  virtual void Arrived(const RequestView& request) = 0;
  virtual void Admitted(const RequestView& request) = 0;
  virtual void Preempted(const RequestView& request) = 0;
  virtual void Removed(const RequestView& request) = 0;
  virtual void Served(absl::Span<const ServedTokens> served) = 0;
  virtual void Violation(std::string what) = 0;
};

class ContractCheckingPolicy final : public Policy {
 public:
  // `observer` must outlive this policy.
  ContractCheckingPolicy(std::unique_ptr<Policy> inner, PolicyObserver* observer)
      : inner_(std::move(inner)), observer_(observer) {}

  Policy& inner() { return *inner_; }
  // Decline() calls seen, over the run: tests that mean to exercise the
  // declined-candidate path check that it was taken.
  int64_t declines() const { return declines_; }

  std::string_view name() const override { return inner_->name(); }
  void OnArrival(const RequestView& r, absl::Time now) override;
  void OnAdmitted(const RequestView& r, absl::Time now) override;
  void OnPreempted(const RequestView& r, absl::Time now) override;
  void OnRemoved(const RequestView& r, absl::Time now) override;
  void OnServed(absl::Span<const ServedTokens> served, absl::Time now) override;
  void OnChanged(const RequestView& r, absl::Time now) override { inner_->OnChanged(r, now); }

  void BeginAdmission(absl::Time now) override;
  RequestId NextAdmission() override;
  void Decline(RequestId id) override;
  void EndAdmission() override;
  bool MayAdmitPast(const RequestView& head, absl::Time now) override {
    return inner_->MayAdmitPast(head, now);
  }
  double AdmissionReserveShare(const RequestView& candidate, absl::Time now) override {
    return inner_->AdmissionReserveShare(candidate, now);
  }
  PrefillRules prefill_rules() const override { return inner_->prefill_rules(); }

  RequestId PickVictim(RequestId beneficiary, bool beneficiary_running) override {
    return inner_->PickVictim(beneficiary, beneficiary_running);
  }
  size_t VictimCandidates(RequestId beneficiary, bool beneficiary_running,
                          absl::Span<RequestId> out) override {
    return inner_->VictimCandidates(beneficiary, beneficiary_running, out);
  }
  size_t ShareReclaimCandidates(RequestId beneficiary, absl::Span<RequestId> out) override {
    return inner_->ShareReclaimCandidates(beneficiary, out);
  }
  // The core asks only these three for victims; the calls above are the
  // wrapped policy's own way to its answer, judged by the answer.
  RequestId ChooseVictim(const VictimRequest& request, const PreemptionCosts& costs) override;
  RequestId PickReclaimVictim(const RequestView& beneficiary,
                              absl::Span<const RequestView> borrowers) override;
  RequestId PickClassLimitVictim(const RequestView& beneficiary) override;

 private:
  void CheckVictim(RequestId victim, RequestId beneficiary, std::string_view asked);

  std::unique_ptr<Policy> inner_;
  PolicyObserver* observer_;
  absl::flat_hash_set<RequestId> waiting_;
  absl::flat_hash_set<RequestId> running_;
  absl::flat_hash_set<RequestId> declined_;
  // Preempted since BeginAdmission (to make room for a candidate).
  absl::flat_hash_set<RequestId> preempted_now_;
  bool admitting_ = false;
  int64_t declines_ = 0;
};

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_TESTING_CONTRACT_CHECKING_POLICY_H_

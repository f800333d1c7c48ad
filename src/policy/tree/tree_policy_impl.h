// File: src/policy/tree/tree_policy_impl.h
//
// TreePolicy keeps one Entry per live request (pooled, so steady-state steps
// do not allocate), turns Policy events into node calls, and implements the
// decline protocol by hiding declined entries from the tree until
// EndAdmission.
//
// The class is declared here and defined by job, one file each:
//   tree_policy.cc            request events (arrival to change), the entry
//                             pool, NewTreePolicy
//   tree_policy_admission.cc  the admission phase: offers, declines,
//                             backfill, reserves
//   tree_policy_service.cc    OnServed: finding the served entries and
//                             charging their service
//   tree_policy_victims.cc    victims and share-reclaim candidates

#ifndef HEARTH_SRC_POLICY_TREE_TREE_POLICY_IMPL_H_
#define HEARTH_SRC_POLICY_TREE_TREE_POLICY_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hearth/policy/policy.h"
#include "policy/tree/entry.h"
#include "policy/tree/node.h"
#include "policy/tree/tree_policy.h"

namespace hearth::policy_internal {

class TreePolicy final : public Policy {
 public:
  TreePolicy(std::string name, std::unique_ptr<Node> root, const TreePolicyRules& rules)
      : name_(std::move(name)),
        root_(std::move(root)),
        head_start_(rules.workflow_head_start),
        rules_(rules) {}

  std::string_view name() const override { return name_; }

  void OnArrival(const RequestView& request, absl::Time now) override;
  void OnAdmitted(const RequestView& request, absl::Time now) override;
  void OnPreempted(const RequestView& request, absl::Time now) override;
  void OnRemoved(const RequestView& request, absl::Time now) override;
  void OnChanged(const RequestView& request, absl::Time now) override;
  void OnServed(absl::Span<const ServedTokens> served, absl::Time now) override;

  void BeginAdmission(absl::Time now) override { root_->Advance(now); }
  RequestId NextAdmission() override;
  void Decline(RequestId id) override;
  bool MayAdmitPast(const RequestView& head, absl::Time now) override;
  PrefillRules prefill_rules() const override;
  bool KeepsRoomInstead(bool beneficiary_running) const;
  Entry* VictimBeneficiary(RequestId id, bool running);
  double AdmissionReserveShare(const RequestView& candidate, absl::Time now) override;
  void EndAdmission() override;
  RequestId PickVictim(RequestId beneficiary,
                       bool beneficiary_running) override;
  size_t VictimCandidates(RequestId beneficiary, bool beneficiary_running,
                          absl::Span<RequestId> out) override;
  size_t ShareReclaimCandidates(RequestId beneficiary, absl::Span<RequestId> out) override;

 private:
  static absl::Span<Entry*> Room(Entry* (&found)[kMaxVictimCandidates],
                                 absl::Span<RequestId> out);
  static size_t Listed(const Entry* b, size_t listed, Entry* const* found,
                       absl::Span<RequestId> out);
  double PriorityReserveShare(const RequestView& candidate) const;

  Entry* Find(RequestId id) {
    auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : it->second;
  }

  // The scheduler asks about the candidate it was just offered (to admit
  // it, or to find it a victim): skip the hash lookup then. Entries are
  // pooled, never freed, and a freed one has an invalid id, so a stale
  // `offered_` never matches.
  Entry* FindOffered(RequestId id) {
    if (offered_ != nullptr && offered_->id == id) return offered_;
    return Find(id);
  }

  // OnServed's steps, once per served sequence: inline (and defined in
  // tree_policy_service.cc, their one caller) so that the per-sequence
  // loop carries no calls.
  inline Entry* FindServed(RequestId id, size_t* cursor);
  inline void ChargeServed(Entry* e, const ServedTokens& s);
  inline void ChargeDecode(Entry* e);
  void ChargeDecodeBatch();

  // Returns the unserved part of the admission-time prefill reservation.
  void Refund(Entry* e) {
    if (e->reserved_prefill > 0) root_->Reserve(e, -e->reserved_prefill);
    e->reserved_prefill = 0;
  }

  void LeaveWaiting(Entry* e);
  void Release(Entry* e);
  Entry* Allocate();

  std::string name_;
  std::unique_ptr<Node> root_;
  absl::Duration head_start_;
  TreePolicyRules rules_;
  absl::flat_hash_map<RequestId, Entry*> entries_;
  // Entries are pooled: a finished request's entry serves the next arrival.
  static constexpr int kChunk = 256;
  static constexpr size_t kPrefetch = 16;
  // Dropped sequences skipped before giving up on last step's order.
  static constexpr size_t kLookAhead = 8;
  std::vector<std::unique_ptr<Entry[]>> pool_;
  std::vector<Entry*> free_;
  std::vector<Entry*> declined_;
  // The last entry NextAdmission offered.
  Entry* offered_ = nullptr;
  // Removed entries kept until the next OnServed.
  std::vector<Entry*> retired_;
  // Entry served at each position of this step's and the previous step's
  // plan (never null: unknown ids point at `unknown_`, whose id is invalid).
  std::vector<Entry*> served_cache_;
  std::vector<Entry*> served_prev_;
  // This step's decode-only entries, charged in one batch, and the last
  // step's.
  std::vector<Entry*> decode_batch_;
  std::vector<Entry*> last_decode_batch_;
  bool released_since_charge_ = false;
  Entry unknown_;
};

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_TREE_TREE_POLICY_IMPL_H_

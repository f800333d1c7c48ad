#include "tests/testing/rank_checking_policy.h"

#include <cstddef>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hearth/policy/fifo.h"

namespace hearth::testing {
namespace {

class RankCheckingPolicy final : public Policy {
public:
  RankCheckingPolicy(std::unique_ptr<Policy> inner,
                     std::shared_ptr<RankViolations> violations)
      : inner_(std::move(inner)), violations_(std::move(violations)) {}

  std::string_view name() const override { return inner_->name(); }

  void OnArrival(const RequestView &r, absl::Time now) override {
    views_[r.id] = r;
    running_.erase(r.id);
    inner_->OnArrival(r, now);
  }
  void OnAdmitted(const RequestView &r, absl::Time now) override {
    running_.insert(r.id);
    inner_->OnAdmitted(r, now);
  }
  void OnPreempted(const RequestView &r, absl::Time now) override {
    running_.erase(r.id);
    if (auto it = offered_victims_.find(r.id); it != offered_victims_.end()) {
      // Evicted for `it->second`: remember the pair until either is served.
      evicted_for_[r.id] = {it->second, served_[it->second]};
      if (!last_beneficiary_running_)
        pending_check_ = r.id;
    }
    // The list answered one question; later preemptions (reclaims, class
    // limits, retries) are not victims of it.
    offered_victims_.clear();
    inner_->OnPreempted(r, now);
  }
  void OnRemoved(const RequestView &r, absl::Time now) override {
    running_.erase(r.id);
    evicted_for_.erase(r.id);
    served_.erase(r.id);
    inner_->OnRemoved(r, now);
  }
  void OnServed(absl::Span<const ServedTokens> served,
                absl::Time now) override {
    // Service moves counters and levels: pairs of earlier evictions are
    // judged again only from the order the policy holds now.
    offered_victims_.clear();
    for (const ServedTokens &s : served) {
      evicted_for_.erase(s.id);
      ++served_[s.id];
    }
    inner_->OnServed(served, now);
  }

  void OnChanged(const RequestView &r, absl::Time now) override {
    views_[r.id] = r;
    // A live change re-ranks the request: evictions made under its old rank
    // are no longer the policy's order, in either direction.
    evicted_for_.erase(r.id);
    absl::erase_if(evicted_for_,
                   [&](const auto &pair) { return pair.second.first == r.id; });
    if (pending_check_ == r.id) pending_check_ = RequestId();
    inner_->OnChanged(r, now);
  }

  void BeginAdmission(absl::Time now) override {
    pending_check_ = RequestId();
    offered_victims_.clear();
    inner_->BeginAdmission(now);
  }
  RequestId NextAdmission() override {
    const RequestId next = inner_->NextAdmission();
    if (pending_check_.valid() && next == pending_check_) {
      Report(absl::StrCat(
          std::string(inner_->name()), ": ", next.ToString(),
          " was preempted for a waiting request, then offered before it",
          Describe(next), " for", Describe(last_b_)));
    }
    pending_check_ = RequestId();
    return next;
  }
  void Decline(RequestId id) override { inner_->Decline(id); }
  // Calls with defaults forward too: without them a tree policy would run
  // without its backfilling, admission reserves and prefill rules.
  bool MayAdmitPast(const RequestView &head, absl::Time now) override {
    return inner_->MayAdmitPast(head, now);
  }
  double AdmissionReserveShare(const RequestView &candidate, absl::Time now) override {
    return inner_->AdmissionReserveShare(candidate, now);
  }
  PrefillRules prefill_rules() const override { return inner_->prefill_rules(); }
  void EndAdmission() override {
    pending_check_ = RequestId();
    inner_->EndAdmission();
  }

  RequestId PickVictim(RequestId beneficiary,
                       bool beneficiary_running) override {
    RequestId v = inner_->PickVictim(beneficiary, beneficiary_running);
    Check(beneficiary, beneficiary_running,
          absl::MakeConstSpan(&v, v.valid() ? 1 : 0));
    return v;
  }
  size_t VictimCandidates(RequestId beneficiary, bool beneficiary_running,
                          absl::Span<RequestId> out) override {
    const size_t n =
        inner_->VictimCandidates(beneficiary, beneficiary_running, out);
    Check(beneficiary, beneficiary_running, absl::MakeConstSpan(out.data(), n));
    return n;
  }
  size_t ShareReclaimCandidates(RequestId beneficiary,
                                absl::Span<RequestId> out) override {
    const size_t n = inner_->ShareReclaimCandidates(beneficiary, out);
    Check(beneficiary, /*beneficiary_running=*/false,
          absl::MakeConstSpan(out.data(), n));
    return n;
  }
  RequestId
  PickReclaimVictim(const RequestView &beneficiary,
                    absl::Span<const RequestView> borrowers) override {
    offered_victims_.clear();
    return inner_->PickReclaimVictim(beneficiary, borrowers);
  }
  RequestId PickClassLimitVictim(const RequestView &beneficiary) override {
    offered_victims_.clear();
    return inner_->PickClassLimitVictim(beneficiary);
  }

private:
  void Check(RequestId beneficiary, bool beneficiary_running,
             absl::Span<const RequestId> victims) {
    offered_victims_.clear();
    last_b_ = beneficiary;
    last_beneficiary_running_ = beneficiary_running;
    for (RequestId v : victims) {
      ++violations_->victims_checked;
      if (v == beneficiary)
        Report(absl::StrCat(std::string(inner_->name()), ": ", v.ToString(),
                            " named as its own victim"));
      if (!running_.contains(v)) {
        Report(absl::StrCat(std::string(inner_->name()), ": victim ",
                            v.ToString(), " is not running"));
      }
      if (auto it = evicted_for_.find(beneficiary);
          it != evicted_for_.end() && it->second.first == v &&
          it->second.second == served_[v]) {
        Report(absl::StrCat(std::string(inner_->name()), ": ",
                            beneficiary.ToString(), " was evicted for ",
                            v.ToString(),
                            " and is now offered it as a victim"));
      }
      offered_victims_[v] = beneficiary;
    }
  }

  void Report(std::string what) {
    if (violations_->first.empty())
      violations_->first = std::move(what);
  }

  // " [id arrival priority class workflow]", for messages.
  std::string Describe(RequestId id) {
    const RequestView &v = views_[id];
    return absl::StrCat(" [", id.ToString(), " arr ",
                        absl::FormatTime(v.arrival_time), " prio ", v.priority,
                        " cls ", v.work_class.value(), " wf ",
                        v.workflow.ToString(), "]");
  }
  absl::flat_hash_map<RequestId, RequestView> views_;
  RequestId last_b_;
  std::unique_ptr<Policy> inner_;
  std::shared_ptr<RankViolations> violations_;
  absl::flat_hash_set<RequestId> running_;
  // The victims last offered, each with its beneficiary.
  absl::flat_hash_map<RequestId, RequestId> offered_victims_;
  bool last_beneficiary_running_ = false;
  // Victim -> the request it was evicted for and how often that one had
  // been served then; the pair stands until either is served again.
  absl::flat_hash_map<RequestId, std::pair<RequestId, int64_t>> evicted_for_;
  absl::flat_hash_map<RequestId, int64_t> served_;
  // A victim just evicted for a waiting beneficiary, checked against the
  // next offer.
  RequestId pending_check_;
};

} // namespace

PolicyFactory RankCheckingFactory(PolicyFactory inner,
                                  std::shared_ptr<RankViolations> violations) {
  return [inner = std::move(inner), violations](const SchedulerOptions &o) {
    std::unique_ptr<Policy> policy = inner ? inner(o) : NewFifoPolicy();
    return std::unique_ptr<Policy>(
        std::make_unique<RankCheckingPolicy>(std::move(policy), violations));
  };
}

} // namespace hearth::testing

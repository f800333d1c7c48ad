// File: src/policy/tree/tree_policy.cc
//
// TreePolicy keeps one Entry per live request (pooled, so steady-state steps
// do not allocate), turns Policy events into node calls, and implements the
// decline protocol by hiding declined entries from the tree until
// EndAdmission.

#include "policy/tree/tree_policy.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace hearth::policy_internal {
namespace {

class TreePolicy final : public Policy {
 public:
  TreePolicy(std::string name, std::unique_ptr<Node> root, const TreePolicyRules& rules)
      : name_(std::move(name)),
        root_(std::move(root)),
        head_start_(rules.workflow_head_start),
        rules_(rules) {}

  std::string_view name() const override { return name_; }

  void OnArrival(const RequestView& request, absl::Time now) override {
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

  void OnAdmitted(const RequestView& request, absl::Time now) override {
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

  void OnPreempted(const RequestView& request, absl::Time now) override {
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

  void OnRemoved(const RequestView& request, absl::Time now) override {
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
  void OnChanged(const RequestView& request, absl::Time now) override {
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

  void OnServed(absl::Span<const ServedTokens> served, absl::Time now) override {
    served_prev_.swap(served_cache_);
    served_cache_.resize(served.size());
    size_t cursor = 0;
    for (size_t i = 0; i < served.size(); ++i) {
      const ServedTokens& s = served[i];
      Entry* e = FindServed(s.id, &cursor);
      served_cache_[i] = e != nullptr ? e : &unknown_;
      if (e == nullptr || (!e->running && !e->retired)) continue;
      ChargeServed(e, s);
    }
    ChargeDecodeBatch();
    root_->Flush();
    for (Entry* e : retired_) Release(e);
    retired_.clear();
  }

  void BeginAdmission(absl::Time now) override { root_->Advance(now); }

  RequestId NextAdmission() override {
    Entry* e = root_->Best();
    offered_ = e;
    return e == nullptr ? RequestId() : e->id;
  }

  void Decline(RequestId id) override {
    Entry* e = Find(id);
    if (e == nullptr || e->running || e->declined || e->retired) return;
    root_->RemoveWaiting(e, /*for_good=*/false);
    e->declined = true;
    declined_.push_back(e);
  }

  // Counted from when the head last started waiting (arrival or preemption):
  // past backfill_wait it holds the line until memory frees for it.
  bool MayAdmitPast(const RequestView& head, absl::Time now) override {
    if (rules_.backfill_wait <= absl::ZeroDuration()) return false;
    const Entry* e = FindOffered(head.id);
    return e != nullptr && !e->running && now - e->waiting_since < rules_.backfill_wait;
  }

  PrefillRules prefill_rules() const override {
    return {.by_deadline = rules_.prefills_by_deadline,
            .background_tokens = rules_.background_prefill_tokens};
  }

  // With a reserve for interactive arrivals, a waiting request finds room
  // without evicting anyone: admission preemption would then only recompute
  // documents, many times FIFO's preemptions for no better attainment
  // (figures: bench/RESULTS.md, "Figures behind the rules"). Growth still
  // has victims, and members' shares are still reclaimed
  // (ShareReclaimCandidates): the reserve keeps room, not shares.
  // Over a host tier the eviction pauses the background victim instead
  // (pauses_background), so the reserve does not stand in for it: the
  // reserve is sized for arrivals, not for a queue of them.
  bool KeepsRoomInstead(bool beneficiary_running) const {
    return !beneficiary_running && !rules_.pauses_background &&
           (rules_.background_kv_reserve > 0 || rules_.priority_reserve.share > 0);
  }

  // The entry victims are asked for, or null when none may be named for it.
  Entry* VictimBeneficiary(RequestId id, bool running) {
    Entry* b = FindOffered(id);
    if (b == nullptr || b->retired || b->running != running) return nullptr;
    return b;
  }

  // Background: no TTFT target of its own or its class's. Either reserve
  // is waived once the candidate has waited its aging interval, the
  // background reserve also once it is due by its class's completion target
  // (Node::Due): it must start then, and the reserve would hold it out.
  double AdmissionReserveShare(const RequestView& candidate, absl::Time now) override {
    if (now - candidate.arrival_time >= rules_.reserve_waived_after) return 0;
    if (rules_.priority_reserve.share > 0) return PriorityReserveShare(candidate);
    if (candidate.ttft_slo != absl::InfiniteDuration()) return 0;
    const Entry* e = FindOffered(candidate.id);
    return e != nullptr && root_->Due(e) ? 0 : rules_.background_kv_reserve;
  }

  void EndAdmission() override {
    for (Entry* e : declined_) {
      e->declined = false;
      root_->AddWaiting(e, Offer::kReoffered);
    }
    declined_.clear();
  }

  RequestId PickVictim(RequestId beneficiary,
                       bool beneficiary_running) override {
    Entry* b = VictimBeneficiary(beneficiary, beneficiary_running);
    if (b == nullptr) return RequestId();
    if (KeepsRoomInstead(beneficiary_running)) return RequestId();
    Entry* victim = root_->Victim(b, beneficiary_running);
    if (victim == nullptr || victim == b || !victim->running) {
      return RequestId();
    }
    return victim->id;
  }

  size_t VictimCandidates(RequestId beneficiary, bool beneficiary_running,
                          absl::Span<RequestId> out) override {
    Entry* b = VictimBeneficiary(beneficiary, beneficiary_running);
    if (b == nullptr) return 0;
    if (KeepsRoomInstead(beneficiary_running)) return 0;
    Entry* found[kMaxVictimCandidates];
    return Listed(b, root_->Victims(b, beneficiary_running, Room(found, out)), found, out);
  }

  size_t ShareReclaimCandidates(RequestId beneficiary, absl::Span<RequestId> out) override {
    Entry* b = VictimBeneficiary(beneficiary, /*running=*/false);
    if (b == nullptr) return 0;
    Entry* found[kMaxVictimCandidates];
    return Listed(b, root_->GuardVictims(b, Room(found, out)), found, out);
  }

 private:
  static absl::Span<Entry*> Room(Entry* (&found)[kMaxVictimCandidates],
                                 absl::Span<RequestId> out) {
    return absl::MakeSpan(found, std::min(out.size(), std::size(found)));
  }
  // The ids of the first `listed` entries of `found` that are running and
  // not `b`, into `out`; returns how many.
  static size_t Listed(const Entry* b, size_t listed, Entry* const* found,
                       absl::Span<RequestId> out) {
    size_t n = 0;
    for (size_t i = 0; i < listed; ++i) {
      if (found[i] != b && found[i]->running) out[n++] = found[i]->id;
    }
    return n;
  }

  // Trunk reservation: the share falls linearly from the lowest class
  // priority to none at the highest, by the request's level. (Lowering it a
  // step per aging interval, as aging raises the level, instead of waiving it
  // after one, starved agents and documents at capacity; figures:
  // bench/RESULTS.md, "Figures behind the rules".)
  double PriorityReserveShare(const RequestView& candidate) const {
    const TreePolicyRules::PriorityReserve& reserve = rules_.priority_reserve;
    const size_t cls = candidate.work_class.value();
    const int64_t level =
        (cls < reserve.class_priority.size() ? reserve.class_priority[cls] : 0) +
        int64_t{candidate.priority};
    if (level >= reserve.top) return 0;
    const double below = static_cast<double>(reserve.top - std::max(level, reserve.bottom));
    return reserve.share * below / static_cast<double>(reserve.top - reserve.bottom);
  }

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

  // Plans list mostly the same sequences in the same order step after step,
  // but not at the same positions: preemptions drop entries, and admissions
  // and prefill-to-decode moves insert some. Walks last step's entries
  // alongside this step's from `*cursor`, skipping a few dropped ones, so
  // that only inserted or moved sequences cost a hash lookup.
  Entry* FindServed(RequestId id, size_t* cursor) {
    Entry* e = nullptr;
    for (size_t j = *cursor; j < served_prev_.size() && j <= *cursor + kLookAhead; ++j) {
      if (served_prev_[j]->id == id) {
        e = served_prev_[j];
        *cursor = j + 1;
        break;
      }
    }
    // The walk is bound by memory latency: fetch the next entry early.
    if (*cursor + kPrefetch < served_prev_.size()) {
      __builtin_prefetch(served_prev_[*cursor + kPrefetch]);
    }
    return e != nullptr ? e : Find(id);
  }

  // Settles one served entry's reservation and charges its service:
  // prefill positions beyond any it was charged for before (recomputing
  // after a preemption is not charged twice) and every decoded token.
  // Single decodes go into one batch, everything else at once.
  void ChargeServed(Entry* e, const ServedTokens& s) {
    if (s.prefill_tokens == 0 && s.decode_tokens == 1) {
      ChargeDecode(e);
      return;
    }
    const int32_t prefill = std::max(s.prefill_tokens, 0);
    const int32_t decode = std::max(s.decode_tokens, 0);
    const int32_t start = e->position;
    e->position += prefill + decode;
    const int32_t fresh = std::max(0, std::min(prefill, start + prefill - e->charged_upto));
    e->charged_upto = std::max(e->charged_upto, e->position);
    const int32_t prepaid = std::min(fresh, e->reserved_prefill);
    e->reserved_prefill -= prepaid;
    // Decoding means the prefill is over: return what was not needed
    // (e.g. prompt blocks found in the prefix cache).
    if (decode > 0) Refund(e);
    // Recomputed positions count as prepaid: accounts of admissions (VTC
    // counters, quotas) skip them, accounts of service received (MLFQ
    // quanta) do not.
    if (prefill == 0 && decode == 1) {
      decode_batch_.push_back(e);
    } else if (prefill > 0 || decode > 0) {
      root_->Charge(e, prefill, decode, prepaid + (prefill - fresh));
    }
  }

  // In steady decoding the same sequences decode step after step: the nodes
  // are then told that the batch repeats, and reuse its split into groups.
  // An entry released since could come back for another request, so a
  // release rules that out.
  void ChargeDecodeBatch() {
    const bool repeat = !released_since_charge_ && decode_batch_ == last_decode_batch_;
    root_->ChargeDecodes(decode_batch_, repeat);
    released_since_charge_ = false;
    last_decode_batch_.swap(decode_batch_);
    decode_batch_.clear();
  }

  // ChargeServed for the one decoded token of a steady decode step, the bulk
  // of every step: no prefill, so nothing fresh and nothing prepaid.
  void ChargeDecode(Entry* e) {
    e->position += 1;
    e->charged_upto = std::max(e->charged_upto, e->position);
    Refund(e);
    decode_batch_.push_back(e);
  }

  // Returns the unserved part of the admission-time prefill reservation.
  void Refund(Entry* e) {
    if (e->reserved_prefill > 0) root_->Reserve(e, -e->reserved_prefill);
    e->reserved_prefill = 0;
  }

  // Takes a waiting entry (offerable or hidden) out of the waiting set.
  void LeaveWaiting(Entry* e) {
    root_->RemoveWaiting(e, /*for_good=*/true);
    if (e->declined) {
      declined_.erase(std::find(declined_.begin(), declined_.end(), e));
      e->declined = false;
    }
  }

  // Back to the pool. The id is cleared so that stale cache slots
  // (served_prev_, offered_) never match it.
  void Release(Entry* e) {
    entries_.erase(e->id);
    e->id = RequestId();
    free_.push_back(e);
    released_since_charge_ = true;
  }

  Entry* Allocate() {
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

}  // namespace

std::unique_ptr<Policy> NewTreePolicy(std::string name, std::unique_ptr<Node> root,
                                      const TreePolicyRules& rules) {
  return std::make_unique<TreePolicy>(std::move(name), std::move(root), rules);
}

}  // namespace hearth::policy_internal

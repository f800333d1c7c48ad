// File: src/policy/nodes/priority_node.cc
//
// Each level keeps its offerable entries ordered by arrival time, so its
// head is its oldest entry and carries the level's largest effective
// priority; a decision compares only the heads of the levels (O(levels)).
//
// "Arrival" here is the entry's rank time (entry.h): its arrival, or for a
// call of a running agent workflow the earlier time the arrival-ordered
// leaves rank it at, so that this node and the leaves below agree on which
// of two requests of one level comes first.
//
// Effective priority p + floor((now - arrival) / I) equals
// floor((now - v) / I) for the "virtual arrival" v = arrival - p * I, so
// ordering running requests by v orders them by effective priority at every
// instant: the running set is one ordered map, and its last entry is the
// least urgent running request.
//
// The SLO-aware variant (NewSloClassNode) keeps the same machinery with one
// level per work class and a deadline instead of a virtual arrival:
// rank time + the request's TTFT target (RequestView::ttft_slo: its own
// override, else its class's WorkClassConfig::ttft_slo), earliest first, so that a request with slack yields to one without (JITServe's
// "just in time"). A class without a target is background: its requests
// rank at rank time + aging_interval, so they fill what interactive classes
// leave and still outrank interactive work arriving an aging interval after
// them; with aging off they rank after every interactive request. A waiting
// request only preempts background work: evicting a running interactive
// request would trade its TPOT for the beneficiary's TTFT. Within a class the
// level below still orders (a request's own target moves it against other
// classes, not ahead of its own class's earlier arrivals); a request with a
// target of its own in a class without one gets a level of its own. A
// background class with a completion target (WorkClassConfig::e2e_slo) has
// its requests go ahead of on-time work once a quarter of it has passed
// (Due()).

#include "policy/nodes/priority_node.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "policy/nodes/member_ledger.h"

namespace hearth::policy_internal {
namespace {

struct Level {
  int64_t priority = 0;
  // SLO mode, background levels: added to an entry's rank time to give its
  // deadline (a level with targets adds each entry's own); tier 1
  // (background with aging off) ranks after every tier 0 entry.
  absl::Duration deadline_offset = absl::ZeroDuration();
  int64_t tier = 0;
  bool background = false;
  // SLO mode, background levels: the class's completion target
  // (WorkClassConfig::e2e_slo). From a quarter of it after arrival until it
  // passes, an entry is due (Due()).
  absl::Duration completion = absl::InfiniteDuration();
  // Tokens per window and share of the window's tokens; 0 means unlimited.
  int64_t quota = 0;
  double max_share = 0;
  int64_t served_in_window = 0;
  // Offerable waiting entries by (arrival time, sequence): oldest first.
  absl::btree_map<std::tuple<absl::Time, uint64_t>, Entry*> oldest;
  std::unique_ptr<Node> child;
  // This level's share of the last ChargeDecodes batch.
  std::vector<Entry*> decode_batch;
};

class PriorityNode final : public Node {
 public:
  // `class_ttft` empty: priority levels; else SLO mode (see the file comment).
  PriorityNode(const PriorityQuotaOptions& options, std::vector<int64_t> class_priorities,
               std::vector<absl::Duration> class_ttft, std::vector<absl::Duration> class_e2e,
               std::optional<MemberGuard> guard, NodeFactory child)
      : options_(options),
        class_priorities_(std::move(class_priorities)),
        class_ttft_(std::move(class_ttft)),
        class_e2e_(std::move(class_e2e)),
        slo_mode_(!class_ttft_.empty()),
        child_factory_(std::move(child)) {
    for (const LevelQuota& q : options.quotas) quotas_[q.priority] = q;
    has_quotas_ = !options.quotas.empty();
    if (guard.has_value() && slo_mode_) {
      ledger_ = std::make_unique<MemberLedger>(std::move(guard->ledger));
      guard_gap_ = guard->gap;
    }
  }

  void AddWaiting(Entry* e, Offer why) override {
    Level& level = LevelOf(e);
    level.oldest.emplace(OldKey(e), e);
    if (ledger_ != nullptr && why != Offer::kReoffered) {
      ledger_->AddWaiting(e, why != Offer::kChanged);
    }
    level.child->AddWaiting(e, why);
  }
  void RemoveWaiting(Entry* e, bool for_good) override {
    Level& level = LevelOf(e);
    if (!e->declined) level.oldest.erase(OldKey(e));
    if (ledger_ != nullptr && for_good) ledger_->RemoveWaiting(e);
    level.child->RemoveWaiting(e, for_good);
  }
  void AddRunning(Entry* e) override {
    Level& level = LevelOf(e);
    running_.emplace(RunKey(e), e);
    if (ledger_ != nullptr) ledger_->AddRunning(e);
    level.child->AddRunning(e);
  }
  void RemoveRunning(Entry* e) override {
    Level& level = LevelOf(e);
    running_.erase(RunKey(e));
    if (ledger_ != nullptr) ledger_->RemoveRunning(e);
    level.child->RemoveRunning(e);
  }
  void Charge(Entry* e, int32_t prefill_tokens, int32_t decode_tokens,
              int32_t prepaid) override {
    if (ledger_ != nullptr) ledger_->Charge(e, prefill_tokens, decode_tokens, prepaid);
    if (!has_quotas_ && !child_charges_) return;
    Level& level = LevelOf(e);
    CountServed(level, prefill_tokens - prepaid + decode_tokens);
    if (child_charges_) {
      level.child->Charge(e, prefill_tokens, decode_tokens, prepaid);
    }
  }
  // Served tokens are counted per level batch, not per entry: one shared
  // running total bumped per entry was a store-to-load chain through the
  // whole batch. The split into levels is kept for a repeated batch.
  void ChargeDecodes(absl::Span<Entry* const> entries, bool repeat) override {
    if (ledger_ != nullptr) ledger_->ChargeDecodes(entries, repeat);
    if (!has_quotas_ && !child_charges_) return;
    if (!repeat) SplitDecodes(entries);
    for (int32_t slot : batched_levels_) {
      Level& level = levels_[slot];
      CountServed(level, static_cast<int64_t>(level.decode_batch.size()));
      if (child_charges_) level.child->ChargeDecodes(level.decode_batch, repeat);
    }
  }
  // Admissions count against the quota at once, so one admission phase
  // cannot overshoot it; refunds never make a window's count negative.
  void Reserve(Entry* e, int32_t tokens) override {
    if (ledger_ != nullptr) ledger_->Reserve(e, tokens);
    Level& level = LevelOf(e);
    level.served_in_window = std::max<int64_t>(0, level.served_in_window + tokens);
    total_in_window_ = std::max<int64_t>(0, total_in_window_ + tokens);
    level.child->Reserve(e, tokens);
  }

  void Flush() override {
    if (ledger_ != nullptr) ledger_->Flush();
    if (!child_charges_) return;
    for (Level& level : levels_) level.child->Flush();
  }

  void Advance(absl::Time now) override {
    now_ = now;
    if (ledger_ != nullptr) ledger_->Advance(now);
    RollWindow(now);
    for (Level& level : levels_) {
      if (!level.oldest.empty()) level.child->Advance(now);
    }
  }

  Entry* Best() override {
    if (slo_mode_) return BestByDeadline();
    const Level* best = nullptr;
    bool best_in_quota = false;
    int64_t best_effective = 0;
    for (const Level& level : levels_) {
      if (level.oldest.empty()) continue;
      bool in_quota = InQuota(level);
      int64_t effective = Effective(level);
      if (best == nullptr || Better(in_quota, effective, level, best_in_quota,
                                    best_effective, *best)) {
        best = &level;
        best_in_quota = in_quota;
        best_effective = effective;
      }
    }
    return best == nullptr ? nullptr : best->child->Best();
  }

  // Victims follow one time-invariant order, the running key (see the file
  // comment): a victim must come after the beneficiary in it, and for a
  // waiting beneficiary by at least a whole aging interval (one level). A
  // fixed order is what keeps recompute preemption live: the first request
  // in it is never a victim, so it finishes (as under FIFO). Within the
  // beneficiary's own level only the level below (e.g. VTC) ranks, so a
  // victim there is its choice alone; from other levels it chooses within
  // the least urgent one.
  Entry* Victim(const Entry* beneficiary, bool beneficiary_running) override {
    if (running_.empty()) return nullptr;
    Entry* least = running_.rbegin()->second;
    Level& level = LevelOf(least);
    if (beneficiary == nullptr) {
      Entry* v = level.child->Victim(nullptr, false);
      return v != nullptr ? v : least;
    }
    if (!Below(least, beneficiary, beneficiary_running)) return nullptr;
    // A level over its quota is offered after every level within quota, so
    // its waiting requests rank after running ones of any level.
    if (!beneficiary_running && !InQuota(LevelOf(beneficiary))) return nullptr;
    if (LevelSlot(least) == LevelSlot(beneficiary)) {
      Entry* v = level.child->Victim(beneficiary, beneficiary_running);
      if (v != nullptr && v != beneficiary && Below(v, beneficiary, beneficiary_running)) {
        return v;
      }
      return LeastUrgentOutside(LevelSlot(beneficiary), beneficiary, beneficiary_running);
    }
    Entry* v = level.child->Victim(nullptr, beneficiary_running);
    if (v != nullptr && Below(v, beneficiary, beneficiary_running)) return v;
    return least;
  }

  // Victim()'s answer, then the least urgent running entries after it, as
  // long as they stay below the beneficiary. Entries of the beneficiary's
  // own level are left to the level below (it alone ranks within a level).
  size_t Victims(const Entry* beneficiary, bool beneficiary_running,
                 absl::Span<Entry*> out) override {
    if (out.empty()) return 0;
    Entry* first = Victim(beneficiary, beneficiary_running);
    if (first == nullptr) return 0;
    out[0] = first;
    size_t n = 1;
    const int32_t own = beneficiary == nullptr ? -1 : LevelSlot(beneficiary);
    // Bounded: skipping the beneficiary's level must not become a scan.
    size_t looked = 0;
    for (auto it = running_.rbegin();
         it != running_.rend() && n < out.size() && looked < kMaxVictimScan; ++it, ++looked) {
      Entry* e = it->second;
      if (beneficiary != nullptr && !Below(e, beneficiary, beneficiary_running)) break;
      if (e == first || LevelSlot(e) == own) continue;
      out[n++] = e;
    }
    return n;
  }

  // Member guard: running `v` of another member may make room for waiting
  // `b` (which has a TTFT target) when v's class is interactive with a
  // target at least kReclaimTargetRatio times b's (a voice command cannot
  // wait for a chat turn to end), b has waited a quarter of its target, v's
  // member holds more than its entitlement while b's will hold at most half
  // of its own (MemberLedger::Outweighs), and, waiting
  // again, v would be offered after b (RanksAfter). Least urgent first,
  // boundedly. Background work is never reclaimed this way: its prompts are
  // long, so recomputing an evicted one costs the household more than the
  // wait it saves (the interactive reserve and growth eviction keep it from
  // holding interactive work out).
  size_t GuardVictims(const Entry* b, absl::Span<Entry*> out) override {
    // The head of a long queue is asked every step, and most steps it has
    // no claim at all: ask that once, not per running entry.
    if (!MayReclaim(b)) return 0;
    size_t n = 0;
    size_t looked = 0;
    for (auto it = running_.rbegin();
         it != running_.rend() && n < out.size() && looked < kMaxVictimScan; ++it, ++looked) {
      Entry* v = it->second;
      if (ReclaimsFrom(b, v) && RanksAfter(v, b)) out[n++] = v;
    }
    return n;
  }

 private:
  using RunKeyType = std::tuple<int64_t, absl::Time, uint64_t>;
  static constexpr size_t kMaxVictimScan = 32;

  // Whether `b`'s member may reclaim its share from `v`'s by evicting `v`
  // (above, but for the admission order).
  // b waits a quarter of its target first: a slot that frees meanwhile
  // costs nobody a recompute.
  bool Reclaims(const Entry* b, const Entry* v) { return MayReclaim(b) && ReclaimsFrom(b, v); }
  // Reclaims' part that depends on `b` alone.
  bool MayReclaim(const Entry* b) {
    return ledger_ != nullptr && HasTarget(b) && now_ - b->waiting_since >= Target(b) / 4;
  }
  // Reclaims' part that depends on `v`, once MayReclaim(b) holds.
  bool ReclaimsFrom(const Entry* b, const Entry* v) {
    return v->user != b->user && LessUrgentThan(v, b) && ledger_->Outweighs(v, b);
  }

  // A target only somewhat looser (chat against agent work) is no reason to
  // evict: on a busy evening such reclaims turn over constantly, each one
  // recomputing the victim's context, and buy its member little.
  static constexpr int kReclaimTargetRatio = 4;
  bool LessUrgentThan(const Entry* v, const Entry* b) {
    return !LevelOf(v).background && Target(v) >= Target(b) * kReclaimTargetRatio;
  }

  // Whether BestByDeadline, offered only `b` and `v`, would offer b first
  // once v waits again: v's level and member given back v's unserved
  // prefill. Otherwise the eviction would be undone in the same phase.
  bool RanksAfter(Entry* v, const Entry* b) {
    Entry* waiting = const_cast<Entry*>(b);
    Head best, late;
    Consider(RankHead(waiting, !InQuota(LevelOf(b)), Counter(b)), &best, &late);
    Consider(RankHead(v, !InQuotaAfterRefund(LevelOf(v), v->reserved_prefill),
                      ledger_->CounterAfterEviction(v)),
             &best, &late);
    return Decide(best, late) == b;
  }

  static std::tuple<absl::Time, uint64_t> OldKey(const Entry* e) {
    return {e->rank_time, e->arrival_seq};
  }
  // Ascending key = descending effective priority (see the file comment).
  RunKeyType RunKey(const Entry* e) {
    const Level& level = levels_[LevelSlot(e)];
    if (slo_mode_) return {level.tier, e->rank_time + Offset(level, e), e->arrival_seq};
    const int64_t priority = level.priority;
    if (options_.aging_interval == absl::InfiniteDuration()) {
      return {-priority, e->rank_time, e->arrival_seq};
    }
    return {0, e->rank_time - options_.aging_interval * priority, e->arrival_seq};
  }

  // Splits a ChargeDecodes batch into its levels' decode_batch, in order.
  void SplitDecodes(absl::Span<Entry* const> entries) {
    for (int32_t slot : batched_levels_) levels_[slot].decode_batch.clear();
    batched_levels_.clear();
    for (Entry* e : entries) {
      const int32_t slot = LevelSlot(e);
      Level& level = levels_[slot];
      if (level.decode_batch.empty()) batched_levels_.push_back(slot);
      level.decode_batch.push_back(e);
    }
  }

  // The least urgent running entry outside level `own` still below `b`,
  // or null; bounded, so that a crowded own level never becomes a scan.
  Entry* LeastUrgentOutside(int32_t own, const Entry* b, bool b_running) {
    size_t looked = 0;
    for (auto it = running_.rbegin(); it != running_.rend() && looked < kMaxVictimScan;
         ++it, ++looked) {
      if (!Below(it->second, b, b_running)) return nullptr;
      if (LevelSlot(it->second) != own) return it->second;
    }
    return nullptr;
  }

  // SLO mode: whether waiting `b` has used half of the wait its target
  // allows (a background request: all of its aging interval). Until then it
  // waits for room to free itself: running requests end every few steps,
  // while the background victim would recompute its whole context, and
  // evicting it for every arrival multiplied preemptions.
  bool SlackSpent(const Entry* b) {
    const Level& level = LevelOf(b);
    const absl::Duration allowed =
        level.background ? level.deadline_offset : Offset(level, b) / 2;
    return level.tier > 0 || now_ - b->rank_time >= allowed;
  }

  // Whether `v` may be preempted for `b` (see Victim()).
  // A running beneficiary never evicts a request its member's share could
  // be reclaimed for (GuardVictims): the two would evict each other in turns.
  bool Below(const Entry* v, const Entry* b, bool b_running) {
    RunKeyType kv = RunKey(v), kb = RunKey(b);
    if (b_running) return kv > kb && !Reclaims(v, b);
    // With the member guard the offer order is not the running key alone
    // (late work goes least-served member first): the victim must also be
    // offered after b once it waits again.
    if (slo_mode_) {
      return LevelOf(v).background && kv > kb && SlackSpent(b) &&
             (ledger_ == nullptr || RanksAfter(const_cast<Entry*>(v), b));
    }
    if (options_.aging_interval == absl::InfiniteDuration()) {
      return std::get<0>(kv) > std::get<0>(kb);
    }
    return std::get<1>(kv) - std::get<1>(kb) >= options_.aging_interval;
  }

  // priority + floor(wait of the level's oldest / aging_interval), saturated.
  int64_t Effective(const Level& level) const {
    return AgedPriority(level.priority,
                        std::get<0>(level.oldest.begin()->first));
  }
  // SLO mode: the candidate each level's child would offer, ranked within
  // quota first, then by band, then by deadline. Bands: on time; late, or
  // background past its aging deadline; background within its aging. A
  // request past its TTFT deadline has missed its SLO whatever happens next,
  // so on-time work goes first, earliest deadline first; but the late head
  // goes before the on-time head when that one has more than half its own
  // target left (just in time: it can let late work go first and still make
  // it; serving late work before urgent on-time work instead would make that
  // late too, EDF's domino under overload). Only the earliest on-time
  // deadline decides: a short target with little slack left (a voice
  // command) is never passed by on-time work due later (an agent's call).
  // With the member guard, late work is shared between members instead of
  // ranked by deadline: the late head is the least-served member's (a
  // member's own backlog then delays that member first, however early its
  // deadlines or stamped arrivals); it passes an on-time head with slack
  // only when its member is served no more than that head's, and an urgent
  // on-time head only when that head's member leads by more than the gap.
  // O(levels) child Best() calls.
  Entry* BestByDeadline() {
    Head best, late;
    for (Level& level : levels_) {
      if (level.oldest.empty()) continue;
      Entry* e = DueOldest(level, level.child->Best());
      if (e == nullptr) continue;
      Consider(RankHead(e, !InQuota(level), Counter(e)), &best, &late);
    }
    return Decide(best, late);
  }

  // A level's head as BestByDeadline ranks it.
  struct Head {
    Entry* e = nullptr;
    // Within quota first, then band, tier, deadline, arrival.
    std::tuple<bool, int64_t, int64_t, absl::Time, uint64_t> key;
    // Late work (band 1) among itself: within quota, then least-served
    // member (0 without the guard), deadline, arrival.
    std::tuple<bool, double, absl::Time, uint64_t> late_key;
    double counter = 0;
    // On time with more than half its own target left.
    bool relaxed = false;
  };

  Head RankHead(Entry* e, bool out_of_quota, double counter) {
    const Level& level = LevelOf(e);
    const absl::Time deadline = e->rank_time + Offset(level, e);
    int64_t band;
    if (level.background) {
      // Aged: beside late work. Without aging (tier 1) it never ages, and
      // its offset is no deadline.
      band = level.tier == 0 && deadline < now_ ? 1 : 2;
    } else {
      band = deadline < now_ ? 1 : 0;
    }
    if (level.background && Due(level, e)) band = -1;
    Head h;
    h.e = e;
    h.key = {out_of_quota, band, level.tier, deadline, e->arrival_seq};
    h.late_key = {out_of_quota, counter, deadline, e->arrival_seq};
    h.counter = counter;
    h.relaxed = band == 0 && deadline - now_ > Offset(level, e) / 2;
    return h;
  }

  static void Consider(const Head& h, Head* best, Head* late) {
    if (std::get<1>(h.key) == 1 && (late->e == nullptr || h.late_key < late->late_key)) *late = h;
    if (best->e == nullptr || h.key < best->key) *best = h;
  }

  // The earliest head, unless the late head may go first (see above).
  Entry* Decide(const Head& best, const Head& late) const {
    if (late.e == nullptr || std::get<0>(late.key) != std::get<0>(best.key)) return best.e;
    const int64_t band = std::get<1>(best.key);
    if (band == 1) return late.e;
    if (band != 0) return best.e;
    if (ledger_ == nullptr) return best.relaxed ? late.e : best.e;
    const double lead = best.counter - late.counter;
    return (best.relaxed ? lead >= 0 : lead > guard_gap_) ? late.e : best.e;
  }

  // The level's head: `e`, its child's choice, unless the level's oldest
  // entry is due (a background class with a completion target): due work
  // goes earliest deadline first, or a member's newer request chosen by the
  // level below would hide an older one of another member that is due.
  Entry* DueOldest(Level& level, Entry* e) {
    if (e == nullptr || level.completion == absl::InfiniteDuration()) return e;
    Entry* oldest = level.oldest.begin()->second;
    return oldest != e && Due(level, oldest) ? oldest : e;
  }

  // Whether background `e` of `level` is due: a quarter of its class's
  // completion target has passed since arrival, and not all of it. Due work
  // goes ahead of on-time work (band -1), so that it starts with three
  // quarters of its target left to run in: ranked by the aging interval
  // alone, a document that must be done in five minutes waited behind
  // interactive work until it was too late, where FIFO finished every one
  // (figures: bench/RESULTS.md, "Figures behind the rules"). With the member
  // guard, not while its member has most of the waiting requests
  // (MemberLedger::QueuesMostOfTheWaiting): one member's flood of two hundred
  // documents would otherwise rank ahead of everyone's chats and could no
  // longer be paused for them.
  bool Due(const Level& level, const Entry* e) {
    if (level.completion == absl::InfiniteDuration() ||
        now_ < e->arrival_time + level.completion / kStartShare ||
        now_ >= e->arrival_time + level.completion) {
      return false;
    }
    return ledger_ == nullptr || !ledger_->QueuesMostOfTheWaiting(e);
  }
  bool Due(const Entry* e) override {
    if (!slo_mode_ || e->running) return false;
    const Level& level = LevelOf(e);
    return level.background && Due(level, e);
  }
  static constexpr int kStartShare = 4;

  double Counter(const Entry* e) const { return ledger_ != nullptr ? ledger_->Counter(e) : 0; }
  int64_t AgedPriority(int64_t priority, absl::Time arrival) const {
    int64_t effective = priority;
    if (options_.aging_interval == absl::InfiniteDuration()) return effective;
    absl::Duration wait = now_ - arrival;
    if (wait <= absl::ZeroDuration()) return effective;
    absl::Duration remainder;
    int64_t steps = absl::IDivDuration(wait, options_.aging_interval, &remainder);
    return effective + std::min<int64_t>(steps, int64_t{1} << 40);
  }

  // Within quota first, then higher effective priority, then the older head.
  static bool Better(bool in_quota, int64_t effective, const Level& level,
                     bool best_in_quota, int64_t best_effective,
                     const Level& best) {
    if (in_quota != best_in_quota) return in_quota;
    if (effective != best_effective) return effective > best_effective;
    return level.oldest.begin()->first < best.oldest.begin()->first;
  }

  bool InQuota(const Level& level) const { return InQuotaAfterRefund(level, 0); }
  // Whether `level` is within quota once `refund` of its served tokens in
  // this window are given back (as Reserve() gives them back).
  bool InQuotaAfterRefund(const Level& level, int64_t refund) const {
    const int64_t served = std::max<int64_t>(0, level.served_in_window - refund);
    const int64_t total = std::max<int64_t>(0, total_in_window_ - refund);
    if (level.quota > 0 && served >= level.quota) return false;
    return level.max_share <= 0 ||
           static_cast<double>(served) <= level.max_share * static_cast<double>(total);
  }

  void RollWindow(absl::Time now) {
    if (window_start_ == absl::InfinitePast()) window_start_ = now;
    if (now - window_start_ < options_.quota_window) return;
    absl::Duration remainder;
    int64_t windows =
        absl::IDivDuration(now - window_start_, options_.quota_window, &remainder);
    window_start_ += options_.quota_window * windows;
    for (Level& level : levels_) level.served_in_window = 0;
    total_in_window_ = 0;
  }

  // Tokens served at `level` in the current quota window.
  void CountServed(Level& level, int64_t tokens) {
    level.served_in_window += tokens;
    total_in_window_ += tokens;
  }

  int32_t LevelSlot(const Entry* e) {
    if (e->level_slot < 0) e->level_slot = FindOrAddLevel(e);
    return e->level_slot;
  }
  Level& LevelOf(const Entry* e) { return levels_[LevelSlot(e)]; }

  int32_t FindOrAddLevel(const Entry* e) {
    const size_t cls = e->work_class.value();
    const int64_t priority =
        (cls < class_priorities_.size() ? class_priorities_[cls] : 0) + int64_t{e->priority};
    // SLO mode: one level per class (its target), the request's own
    // priority only choosing the quota.
    const int64_t key =
        slo_mode_ ? static_cast<int64_t>(cls) * 2 + (HasTarget(e) ? 0 : 1) : priority;
    auto [it, inserted] = index_.try_emplace(key, static_cast<int32_t>(levels_.size()));
    if (inserted) {
      Level& level = levels_.emplace_back();
      level.priority = priority;
      if (slo_mode_) SetDeadline(level, HasTarget(e), cls);
      auto quota = quotas_.find(priority);
      if (quota != quotas_.end()) {
        level.quota = quota->second.tokens_per_window;
        level.max_share = quota->second.max_share;
      }
      level.child = child_factory_();
      child_charges_ = level.child->NeedsCharges();
    }
    return it->second;
  }

  // SLO mode: the entry's TTFT target, its own or else its class's.
  absl::Duration Target(const Entry* e) const {
    if (e->ttft_slo != absl::InfiniteDuration()) return e->ttft_slo;
    const size_t cls = e->work_class.value();
    return cls < class_ttft_.size() ? class_ttft_[cls] : absl::InfiniteDuration();
  }
  bool HasTarget(const Entry* e) const { return Target(e) != absl::InfiniteDuration(); }
  // What the entry's deadline adds to its rank time.
  absl::Duration Offset(const Level& level, const Entry* e) const {
    return level.background ? level.deadline_offset : Target(e);
  }

  void SetDeadline(Level& level, bool has_target, size_t cls) const {
    level.background = !has_target;
    if (!level.background) {
      level.deadline_offset = absl::ZeroDuration();  // Each entry's own target.
      return;
    }
    level.completion = cls < class_e2e_.size() ? class_e2e_[cls] : absl::InfiniteDuration();
    if (options_.aging_interval != absl::InfiniteDuration()) {
      level.deadline_offset = options_.aging_interval;
    } else {
      level.tier = 1;
    }
  }

  PriorityQuotaOptions options_;
  // WorkClassConfig::priority by WorkClassId::value().
  std::vector<int64_t> class_priorities_;
  // WorkClassConfig::ttft_slo by WorkClassId::value(); empty: priority mode.
  std::vector<absl::Duration> class_ttft_;
  // WorkClassConfig::e2e_slo by WorkClassId::value() (SLO mode).
  std::vector<absl::Duration> class_e2e_;
  bool slo_mode_ = false;
  NodeFactory child_factory_;
  absl::flat_hash_map<int64_t, LevelQuota> quotas_;
  // Tokens served in the current window, all levels together.
  int64_t total_in_window_ = 0;
  // Levels in creation order (stable indices).
  std::vector<Level> levels_;
  // Levels with a non-empty decode_batch since the last ChargeDecodes.
  std::vector<int32_t> batched_levels_;
  // Running entries, most urgent first (see RunKey).
  absl::btree_map<RunKeyType, Entry*> running_;
  absl::flat_hash_map<int64_t, int32_t> index_;
  // SLO mode with the member guard: members' service and holdings across
  // classes, and the counter lead past which an urgent on-time head yields
  // to another member's late one.
  std::unique_ptr<MemberLedger> ledger_;
  double guard_gap_ = 0;
  absl::Time now_ = absl::InfinitePast();
  absl::Time window_start_ = absl::InfinitePast();
  bool child_charges_ = true;
  bool has_quotas_ = false;
};

}  // namespace

std::unique_ptr<Node> NewPriorityNode(const PriorityQuotaOptions& options,
                                      std::vector<int64_t> class_priorities,
                                      NodeFactory child) {
  return std::make_unique<PriorityNode>(options, std::move(class_priorities),
                                        std::vector<absl::Duration>(),
                                        std::vector<absl::Duration>(), std::nullopt,
                                        std::move(child));
}

std::unique_ptr<Node> NewSloClassNode(const PriorityQuotaOptions& options,
                                      std::vector<int64_t> class_priorities,
                                      std::vector<absl::Duration> class_ttft,
                                      std::vector<absl::Duration> class_e2e,
                                      std::optional<MemberGuard> guard, NodeFactory child) {
  // An empty list would select priority mode: one background class instead.
  if (class_ttft.empty()) class_ttft.push_back(absl::InfiniteDuration());
  return std::make_unique<PriorityNode>(options, std::move(class_priorities),
                                        std::move(class_ttft), std::move(class_e2e),
                                        std::move(guard), std::move(child));
}

}  // namespace hearth::policy_internal

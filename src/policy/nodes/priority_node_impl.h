// File: src/policy/nodes/priority_node_impl.h
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
//
// The node is declared here and defined by job, one file each:
//   priority_node.cc          construction, the factories, the tree's
//                             events and charges, levels and quota windows
//   priority_node_order.cc    the admission order: Best, by priority or by
//                             deadline, and what is due
//   priority_node_victims.cc  victims, and the member guard's reclaims

#ifndef HEARTH_SRC_POLICY_NODES_PRIORITY_NODE_IMPL_H_
#define HEARTH_SRC_POLICY_NODES_PRIORITY_NODE_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hearth/policy/priority_quota.h"
#include "policy/nodes/member_ledger.h"
#include "policy/nodes/priority_node.h"
#include "policy/tree/node.h"

namespace hearth::policy_internal {

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
               std::optional<MemberGuard> guard, NodeFactory child);
  void AddWaiting(Entry* e, Offer why) override;
  void RemoveWaiting(Entry* e, bool for_good) override;
  void AddRunning(Entry* e) override;
  void RemoveRunning(Entry* e) override;
  void Charge(Entry* e, int32_t prefill_tokens, int32_t decode_tokens,
              int32_t prepaid) override;
  void ChargeDecodes(absl::Span<Entry* const> entries, bool repeat) override;
  void Reserve(Entry* e, int32_t tokens) override;
  void Flush() override;
  void Advance(absl::Time now) override;
  Entry* Best() override;
  Entry* Victim(const Entry* beneficiary, bool beneficiary_running) override;
  size_t Victims(const Entry* beneficiary, bool beneficiary_running,
                 absl::Span<Entry*> out) override;
  size_t GuardVictims(const Entry* b, absl::Span<Entry*> out) override;

 private:
  using RunKeyType = std::tuple<int64_t, absl::Time, uint64_t>;
  static constexpr size_t kMaxVictimScan = 32;
  bool Reclaims(const Entry* b, const Entry* v);
  bool MayReclaim(const Entry* b);
  bool ReclaimsFrom(const Entry* b, const Entry* v);

  // A target only somewhat looser (chat against agent work) is no reason to
  // evict: on a busy evening such reclaims turn over constantly, each one
  // recomputing the victim's context, and buy its member little.
  static constexpr int kReclaimTargetRatio = 4;
  bool LessUrgentThan(const Entry* v, const Entry* b);
  bool RanksAfter(Entry* v, const Entry* b);
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

  void SplitDecodes(absl::Span<Entry* const> entries);
  Entry* LeastUrgentOutside(int32_t own, const Entry* b, bool b_running);
  bool SlackSpent(const Entry* b);
  bool Below(const Entry* v, const Entry* b, bool b_running);
  int64_t Effective(const Level& level) const;
  Entry* BestByDeadline();

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
  Head RankHead(Entry* e, bool out_of_quota, double counter);
  static void Consider(const Head& h, Head* best, Head* late);
  Entry* Decide(const Head& best, const Head& late) const;
  Entry* DueOldest(Level& level, Entry* e);
  bool Due(const Level& level, const Entry* e);
  bool Due(const Entry* e) override;
  static constexpr int kStartShare = 4;
  double Counter(const Entry* e) const { return ledger_ != nullptr ? ledger_->Counter(e) : 0; }
  int64_t AgedPriority(int64_t priority, absl::Time arrival) const;
  static bool Better(bool in_quota, int64_t effective, const Level& level,
                     bool best_in_quota, int64_t best_effective,
                     const Level& best);
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

  void RollWindow(absl::Time now);

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

  int32_t FindOrAddLevel(const Entry* e);

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

  void SetDeadline(Level& level, bool has_target, size_t cls) const;
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

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_NODES_PRIORITY_NODE_IMPL_H_

// File: src/policy/nodes/priority_node_order.cc
//
// PriorityNode's admission order: Best, by effective priority (aging) or,
// in SLO mode, by band and deadline, and which background work is due.
// priority_node_impl.h's file comment states the design and how the class
// is split.

#include "policy/nodes/priority_node_impl.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace hearth::policy_internal {

Entry* PriorityNode::Best() {
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

// priority + floor(wait of the level's oldest / aging_interval), saturated.
int64_t PriorityNode::Effective(const Level& level) const {
  return AgedPriority(level.priority,
                      std::get<0>(level.oldest.begin()->first));
}

int64_t PriorityNode::AgedPriority(int64_t priority, absl::Time arrival) const {
  int64_t effective = priority;
  if (options_.aging_interval == absl::InfiniteDuration()) return effective;
  absl::Duration wait = now_ - arrival;
  if (wait <= absl::ZeroDuration()) return effective;
  absl::Duration remainder;
  int64_t steps = absl::IDivDuration(wait, options_.aging_interval, &remainder);
  return effective + std::min<int64_t>(steps, int64_t{1} << 40);
}

// Within quota first, then higher effective priority, then the older head.
bool PriorityNode::Better(bool in_quota, int64_t effective, const Level& level,
                          bool best_in_quota, int64_t best_effective,
                          const Level& best) {
  if (in_quota != best_in_quota) return in_quota;
  if (effective != best_effective) return effective > best_effective;
  return level.oldest.begin()->first < best.oldest.begin()->first;
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
Entry* PriorityNode::BestByDeadline() {
  Head best, late;
  for (Level& level : levels_) {
    if (level.oldest.empty()) continue;
    Entry* e = DueOldest(level, level.child->Best());
    if (e == nullptr) continue;
    Consider(RankHead(e, !InQuota(level), Counter(e)), &best, &late);
  }
  return Decide(best, late);
}

PriorityNode::Head PriorityNode::RankHead(Entry* e, bool out_of_quota, double counter) {
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

void PriorityNode::Consider(const Head& h, Head* best, Head* late) {
  if (std::get<1>(h.key) == 1 && (late->e == nullptr || h.late_key < late->late_key)) *late = h;
  if (best->e == nullptr || h.key < best->key) *best = h;
}

// The earliest head, unless the late head may go first (see above).
Entry* PriorityNode::Decide(const Head& best, const Head& late) const {
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
Entry* PriorityNode::DueOldest(Level& level, Entry* e) {
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
bool PriorityNode::Due(const Level& level, const Entry* e) {
  if (level.completion == absl::InfiniteDuration() ||
      now_ < e->arrival_time + level.completion / kStartShare ||
      now_ >= e->arrival_time + level.completion) {
    return false;
  }
  return ledger_ == nullptr || !ledger_->QueuesMostOfTheWaiting(e);
}

bool PriorityNode::Due(const Entry* e) {
  if (!slo_mode_ || e->running) return false;
  const Level& level = LevelOf(e);
  return level.background && Due(level, e);
}

}  // namespace hearth::policy_internal

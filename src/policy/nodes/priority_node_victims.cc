// File: src/policy/nodes/priority_node_victims.cc
//
// PriorityNode's victims: whom a beneficiary may preempt in the running
// order, and the member guard's reclaims of an over-served member's work.
// priority_node_impl.h's file comment states the design and how the class
// is split.

#include "policy/nodes/priority_node_impl.h"

#include <cstddef>
#include <cstdint>
#include <tuple>

namespace hearth::policy_internal {

// Victims follow one time-invariant order, the running key (see
// priority_node_impl.h's file comment): a victim must come after the
// beneficiary in it, and for a waiting beneficiary by at least a whole
// aging interval (one level). A fixed order is what keeps recompute
// preemption live: the first request in it is never a victim, so it
// finishes (as under FIFO). Within the beneficiary's own level only the
// level below (e.g. VTC) ranks, so a victim there is its choice alone; from
// other levels it chooses within the least urgent one.
Entry* PriorityNode::Victim(const Entry* beneficiary, bool beneficiary_running) {
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
size_t PriorityNode::Victims(const Entry* beneficiary, bool beneficiary_running,
                             absl::Span<Entry*> out) {
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
size_t PriorityNode::GuardVictims(const Entry* b, absl::Span<Entry*> out) {
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

// Whether `b`'s member may reclaim its share from `v`'s by evicting `v`
// (above, but for the admission order).
// b waits a quarter of its target first: a slot that frees meanwhile
// costs nobody a recompute.
bool PriorityNode::Reclaims(const Entry* b, const Entry* v) {
  return MayReclaim(b) && ReclaimsFrom(b, v);
}

// Reclaims' part that depends on `b` alone.
bool PriorityNode::MayReclaim(const Entry* b) {
  return ledger_ != nullptr && HasTarget(b) && now_ - b->waiting_since >= Target(b) / 4;
}

// Reclaims' part that depends on `v`, once MayReclaim(b) holds.
bool PriorityNode::ReclaimsFrom(const Entry* b, const Entry* v) {
  return v->user != b->user && LessUrgentThan(v, b) && ledger_->Outweighs(v, b);
}

bool PriorityNode::LessUrgentThan(const Entry* v, const Entry* b) {
  return !LevelOf(v).background && Target(v) >= Target(b) * kReclaimTargetRatio;
}

// Whether BestByDeadline, offered only `b` and `v`, would offer b first
// once v waits again: v's level and member given back v's unserved
// prefill. Otherwise the eviction would be undone in the same phase.
bool PriorityNode::RanksAfter(Entry* v, const Entry* b) {
  Entry* waiting = const_cast<Entry*>(b);
  Head best, late;
  Consider(RankHead(waiting, !InQuota(LevelOf(b)), Counter(b)), &best, &late);
  Consider(RankHead(v, !InQuotaAfterRefund(LevelOf(v), v->reserved_prefill),
                    ledger_->CounterAfterEviction(v)),
           &best, &late);
  return Decide(best, late) == b;
}

// The least urgent running entry outside level `own` still below `b`,
// or null; bounded, so that a crowded own level never becomes a scan.
Entry* PriorityNode::LeastUrgentOutside(int32_t own, const Entry* b, bool b_running) {
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
bool PriorityNode::SlackSpent(const Entry* b) {
  const Level& level = LevelOf(b);
  const absl::Duration allowed =
      level.background ? level.deadline_offset : Offset(level, b) / 2;
  return level.tier > 0 || now_ - b->rank_time >= allowed;
}

// Whether `v` may be preempted for `b` (see Victim()).
// A running beneficiary never evicts a request its member's share could
// be reclaimed for (GuardVictims): the two would evict each other in turns.
bool PriorityNode::Below(const Entry* v, const Entry* b, bool b_running) {
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

}  // namespace hearth::policy_internal

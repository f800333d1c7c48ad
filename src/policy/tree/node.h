// File: src/policy/tree/node.h
//
// A node of a policy tree. The root is driven by `TreePolicy`
// (tree_policy.h), which owns one `Entry` per live request and turns the
// Policy events into node calls. Inner nodes (priority levels, fair shares
// between users or classes) pick one child; leaves (arrival order, MLFQ)
// order requests. Nodes live in src/policy/nodes/, one file each; the tree
// builder (tree_builder.h) is the only code that knows them all.
//
// Waiting states of an entry, as nodes see them:
//   offerable  in the waiting set and may be offered (AddWaiting),
//   hidden     still waiting but declined for this admission phase
//              (RemoveWaiting(e, false); back with AddWaiting(e, kReoffered)).
// `Entry::declined` is true exactly while hidden, and is still true when a
// hidden entry leaves for good (RemoveWaiting(e, true)), so a node knows
// whether its offer structures still hold the entry.
//
// Every call on a node forwards to the child owning the entry, so each node
// keeps only its own bookkeeping. Nothing here is thread-safe; policies run
// on the engine thread.

#ifndef HEARTH_SRC_POLICY_TREE_NODE_H_
#define HEARTH_SRC_POLICY_TREE_NODE_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "policy/tree/entry.h"

namespace hearth::policy_internal {

// Why an entry becomes offerable.
enum class Offer {
  // It entered the waiting set for the first time.
  kArrived,
  // It entered the waiting set again after running.
  kPreempted,
  // It was hidden (declined) and may be offered again.
  kReoffered,
  // It left the tree a moment ago to be re-ranked (a live priority or class
  // change): like an arrival for counts, but the state it earned (MLFQ
  // level and service, a fair-share group's place) is kept.
  kChanged,
};

class Node {
 public:
  virtual ~Node() = default;

  virtual void AddWaiting(Entry* e, Offer why) = 0;
  // `for_good`: the entry leaves the waiting set (admitted, removed), from
  // either waiting state; else an offerable entry becomes hidden.
  virtual void RemoveWaiting(Entry* e, bool for_good) = 0;
  virtual void AddRunning(Entry* e) = 0;
  virtual void RemoveRunning(Entry* e) = 0;
  // Service a running (or just removed) entry received in one step.
  // `prepaid` (<= prefill_tokens) of the prefill was already charged through
  // Reserve(); accounts that count admissions (VTC counters, quotas) skip
  // it, accounts of actual service (MLFQ quanta) do not.
  virtual void Charge(Entry* e, int32_t prefill_tokens, int32_t decode_tokens,
                      int32_t prepaid) = 0;
  // One decoded token for each of `entries` (running or just removed), none
  // of them with prefill or reservation in the same step: the steady-state
  // bulk of every OnServed, passed as one batch so that a node can charge it
  // in a tight loop instead of a virtual call per sequence.
  // `repeat`: `entries` is this node's previous batch again, the same
  // entries in the same order and none of them reused for another request
  // since, as when the same sequences decode step after step. A node may
  // then reuse what it derived from that batch (its split into groups)
  // instead of visiting every entry again.
  virtual void ChargeDecodes(absl::Span<Entry* const> entries, bool repeat) {
    for (Entry* e : entries) Charge(e, 0, 1, 0);
  }
  // Prefill committed at admission (tokens > 0), or the unserved part of it
  // given back (tokens < 0) on preemption, removal or first decode. Lets the
  // next candidate of the same admission phase see this admission.
  virtual void Reserve(Entry* e, int32_t tokens) = 0;
  // False when Charge(), Reserve() and Flush() do nothing here (an arrival
  // order leaf): parents then skip the calls on the per-step path.
  virtual bool NeedsCharges() const { return true; }
  // Ends a batch of Charge() calls (one OnServed): nodes may defer ordering
  // work (re-keying heaps) to here so that it is done once per group.
  virtual void Flush() = 0;
  // Time moved to `now` (start of an admission phase): aging, promotion,
  // quota windows. Visits only subtrees with waiting entries.
  virtual void Advance(absl::Time now) = 0;
  // The offerable entry this subtree would admit next, or null.
  virtual Entry* Best() = 0;
  // A running entry of this subtree ranked below `beneficiary`, or null.
  // `beneficiary` is null when it lies outside this subtree: any running
  // entry may be returned then (the least valuable one). Never returns
  // `beneficiary` itself.
  virtual Entry* Victim(const Entry* beneficiary, bool beneficiary_running) = 0;
  // Up to `out.size()` running entries Victim() could return, the first
  // being Victim()'s answer and the rest the next least valuable ones this
  // node still ranks after `beneficiary`; returns how many. Default: the one.
  virtual size_t Victims(const Entry* beneficiary, bool beneficiary_running,
                         absl::Span<Entry*> out) {
    if (out.empty()) return 0;
    out[0] = Victim(beneficiary, beneficiary_running);
    return out[0] != nullptr ? 1 : 0;
  }
  // Running entries of other members a waiting `beneficiary` may preempt
  // because their member holds more than its share (a class level's member
  // guard; Policy::ShareReclaimCandidates). Up to `out.size()`, least
  // valuable first; returns how many. Default: none.
  virtual size_t GuardVictims(const Entry* beneficiary, absl::Span<Entry*> out) { return 0; }
  // Whether waiting background `e` is due to start by its class's
  // completion target (WorkClassConfig::e2e_slo; the SLO class level), so
  // that it goes ahead of on-time work and is no longer held to the room
  // kept for interactive arrivals. Default: never.
  virtual bool Due(const Entry* e) { return false; }
};

// Builds one child node; inner nodes call it once per group they create.
using NodeFactory = std::function<std::unique_ptr<Node>()>;

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_TREE_NODE_H_

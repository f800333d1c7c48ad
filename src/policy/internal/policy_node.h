// File: src/policy/internal/policy_node.h
//
// The engine behind every Hearth policy but FIFO: a tree of `Node`s. The
// root is driven by `TreePolicy` (policy_tree.cc), which owns one `Entry` per
// live request and turns the Policy events into node calls. Inner nodes
// (priority levels, fair shares between users or classes) pick one child;
// leaves (arrival order, MLFQ) order requests.
//
// Waiting states of an entry, as nodes see them:
//   offerable  in the waiting set and may be offered (AddWaiting(e, true)),
//   hidden     still waiting but declined for this admission phase
//              (RemoveWaiting(e, false); back with AddWaiting(e, false)).
// `Entry::declined` is true exactly while hidden, and is still true when a
// hidden entry leaves for good (RemoveWaiting(e, true)), so a node knows
// whether its offer structures still hold the entry.
//
// Every call on a node forwards to the child owning the entry, so each node
// keeps only its own bookkeeping. Nothing here is thread-safe; policies run
// on the engine thread.

#ifndef HEARTH_SRC_POLICY_INTERNAL_POLICY_NODE_H_
#define HEARTH_SRC_POLICY_INTERNAL_POLICY_NODE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "hearth/policy/mlfq.h"
#include "hearth/policy/priority_quota.h"

namespace hearth::policy_internal {

// What a policy remembers of one live request. The fields every step's
// service path touches (OnServed -> Charge) come first and fit one cache
// line: with a thousand sequences served per step, a second line per entry
// is a second cache miss per sequence.
struct alignas(64) Entry {
  // --- Hot.
  RequestId id;
  // Prefill tokens charged at admission and not yet served.
  int32_t reserved_prefill = 0;
  // MLFQ leaf state: level (-1 before skip-join) and service at that level.
  int32_t mlfq_level = -1;
  double mlfq_served = 0;
  // Where this entry sits in the nodes of its path, cached on first use so
  // that the per-step service path does no hash lookups: its group in the
  // fair-share node of each ShareKey, and its level in the priority node.
  mutable int32_t share_slot[2] = {-1, -1};
  mutable int32_t level_slot = -1;
  UserId user;
  WorkClassId work_class;
  // The work class's priority plus the request's (RequestView::priority).
  int64_t priority = 0;
  bool running = false;
  bool declined = false;
  // Removed (terminal) but kept until the next OnServed charges its last step.
  bool retired = false;
  // Promoted for starvation since it last ran.
  bool mlfq_promoted = false;
  // Demoted since it was last admitted: its quantum ran out, so it may yield.
  bool mlfq_demoted_while_running = false;

  // --- Touched on events only.
  int32_t prompt_tokens = 0;
  uint64_t arrival_seq = 0;
  // Where arrival-ordered leaves rank the request: its arrival, or for a
  // call of a running agent workflow up to the tree's workflow head start
  // earlier, but never before its workflow's first call arrived.
  absl::Time rank_time = absl::InfinitePast();
  absl::Time arrival_time = absl::InfinitePast();
  // When the entry last entered the waiting set (arrival or preemption).
  absl::Time waiting_since = absl::InfinitePast();
};
static_assert(offsetof(Entry, prompt_tokens) <= 64,
              "the hot fields of Entry must fit its first cache line");

class Node {
 public:
  virtual ~Node() = default;

  // `fresh`: the entry enters the waiting set (arrival, preemption); else a
  // hidden entry becomes offerable again.
  virtual void AddWaiting(Entry* e, bool fresh) = 0;
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
  virtual void ChargeDecodes(absl::Span<Entry* const> entries) {
    for (Entry* e : entries) Charge(e, 0, 1, 0);
  }
  // Prefill committed at admission (tokens > 0), or the unserved part of it
  // given back (tokens < 0) on preemption, removal or first decode. Lets the
  // next candidate of the same admission phase see this admission.
  virtual void Reserve(Entry* e, int32_t tokens) = 0;
  // False when Charge(), Reserve() and Flush() do nothing here (a FIFO
  // leaf): parents then skip the calls on the per-step path.
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
};

using NodeFactory = std::function<std::unique_ptr<Node>()>;

// Arrival order (FIFO) leaf, by Entry::rank_time then arrival: the next call
// of a running agent workflow can rank ahead of work that arrived shortly
// before it (Agentix: program-level first come, first served, bounded by the
// head start). Victims are the latest in that order, and only for a running
// beneficiary ranked earlier.
std::unique_ptr<Node> NewArrivalOrderNode();

// Skip-join MLFQ leaf; `options` must be valid.
std::unique_ptr<Node> NewMlfqNode(const MlfqOptions& options);

// Which RequestView field a fair-share node groups by.
enum class ShareKey { kUser, kWorkClass };

struct FairShareParams {
  ShareKey key = ShareKey::kUser;
  double prompt_token_weight = 1.0;
  double decode_token_weight = 2.0;
  // By key value; missing keys weigh 1.
  std::vector<double> weights;
  bool preempt_for_admission = false;
  double admission_preemption_gap = 0;
};

// InvalidArgument naming `field`[i] unless every weight is finite and > 0.
absl::Status ValidateShareWeights(absl::Span<const double> weights,
                                  std::string_view field);

// Virtual Token Counter over groups (users or classes), with the lift rule.
std::unique_ptr<Node> NewFairShareNode(FairShareParams params,
                                       NodeFactory child);

// Priority levels with quotas and aging; `options` must be valid.
std::unique_ptr<Node> NewPriorityNode(const PriorityQuotaOptions& options,
                                      NodeFactory child);

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_INTERNAL_POLICY_NODE_H_

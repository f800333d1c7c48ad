// File: hearth/policy/policy.h
//
// `Policy` is the one seam where ordering decisions live: which waiting
// request to admit next, and which running request yields when memory or a
// limit is short (for a beneficiary's growth or admission, to reclaim
// borrowed class capacity, or within a class's hard KV budget). The scheduler
// core owns all state, decides which requests are eligible, and validates
// every decision against the token budget, the sequence cap, class limits and
// free KV blocks; a policy only ranks.
//
// A policy learns about requests through events and keeps its own incremental
// structures (queues, heaps keyed by counters), so that a step costs
// O(changes * log n), never a sort of everything.
//
// Lifecycle of a request as a policy sees it:
//   OnArrival -> (OnAdmitted -> OnServed* -> [OnPreempted -> OnAdmitted ...])
//   -> OnRemoved
// A request is "waiting" for the policy between OnArrival/OnPreempted and
// OnAdmitted, and "running" between OnAdmitted and OnPreempted/OnRemoved.
// OnRemoved is called once each time a request leaves the policy's view:
// when it ends, from either state, and when its model is unloaded while it
// waits (it then returns with OnArrival once the model is back). Views
// passed with an event show the request after the change.
//
// Thread-safety: all calls come from the engine thread (inside Plan/Complete);
// implementations need no locking.
//
// Example (a policy of one's own):
//   // MyPolicy would implement every pure virtual method below; FIFO stands in.
//   options.policy_factory = [](const hearth::SchedulerOptions& o) {
//     return hearth::NewFifoPolicy();   // std::make_unique<MyPolicy>(o)
//   };

#ifndef HEARTH_POLICY_POLICY_H_
#define HEARTH_POLICY_POLICY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "hearth/policy/preemption_costs.h"
#include "hearth/request/request_view.h"

namespace hearth {

// Service one request received in one completed step.
struct ServedTokens {
  RequestId id;
  UserId user;
  WorkClassId work_class;
  // Prompt (or recomputed) positions processed this step.
  int32_t prefill_tokens = 0;
  // Tokens a decode step produced for the request: 1, or with speculative
  // decoding 1 + its accepted drafts; 0 for a prefill step.
  int32_t decode_tokens = 0;
};

// The policy's standing rules for each step's prefill tokens, which the
// core applies when it fills the budget.
struct PrefillRules {
  // Running prefills take the budget in order of their TTFT deadline
  // (RequestView::ttft_deadline; none last) rather than the order they were
  // admitted in: a voice command's prompt then runs in the next step even
  // while long documents are prefilling.
  bool by_deadline = false;
  // Prefill tokens per step that requests without a TTFT target
  // (RequestView::ttft_slo infinite) may take together while any sequence
  // decodes; 0: no cap. Long background prompts otherwise fill every step's
  // budget, and every decoding request's time per output token stretches
  // with the step. Negative counts as 0.
  int32_t background_tokens = 0;
};

class Policy {
 public:
  virtual ~Policy() = default;

  // Short stable name for reports ("fifo", "vtc", ...).
  virtual std::string_view name() const = 0;

  // --- Events. `now` is the time passed to the Plan/Complete in progress.

  // A request entered the waiting set for the first time.
  virtual void OnArrival(const RequestView& request, absl::Time now) = 0;
  // A waiting request was admitted and now runs (also on resume after
  // preemption).
  virtual void OnAdmitted(const RequestView& request, absl::Time now) = 0;
  // A running request was preempted and is waiting again.
  virtual void OnPreempted(const RequestView& request, absl::Time now) = 0;
  // The request reached a terminal phase, from waiting or running.
  virtual void OnRemoved(const RequestView& request, absl::Time now) = 0;
  // Tokens served in one completed step, one entry per scheduled request.
  virtual void OnServed(absl::Span<const ServedTokens> served,
                        absl::Time now) = 0;
  // The host changed a waiting, running or swapped request's priority or
  // work class (Scheduler::SetPriority / SetWorkClass); `request` shows the
  // new ones, and its TTFT target and deadline are its new class's unless
  // it set its own. Comes at the start of a Plan, outside admission phases.
  // The default ignores it, so a policy that ranks by neither (FIFO) need
  // not care; one that does keeps ranking by what it saw at arrival unless
  // it overrides this.
  virtual void OnChanged(const RequestView& request, absl::Time now);

  // --- Decisions.

  // Starts the admission phase of a step. Candidates declined during the
  // phase are not offered again until the next BeginAdmission.
  virtual void BeginAdmission(absl::Time now) = 0;
  // The waiting request the policy would admit next, or an invalid id when no
  // waiting request remains to offer. Must not change policy state other than
  // what Decline/EndAdmission restore.
  virtual RequestId NextAdmission() = 0;
  // The scheduler cannot admit `id` this step for a reason particular to it
  // (e.g. its class is at its cap); offer the next one instead.
  virtual void Decline(RequestId id) = 0;
  // Ends the admission phase; declined requests become candidates again.
  virtual void EndAdmission() = 0;
  // `head`, offered by NextAdmission and entitled to room, finds neither room
  // nor a victim. True lets the scheduler decline it for this step and admit
  // later candidates that fit now (backfilling: small interactive requests
  // no longer wait for the memory a large one needs); false makes every later
  // candidate wait behind it. Backfilling takes memory the head is waiting
  // for, so a policy that answers true must stop doing so for a head that has
  // waited long enough, or a large request could wait forever. Default: false
  // (head of line waits, as in vLLM's scheduler).
  virtual bool MayAdmitPast(const RequestView& head, absl::Time now);
  // Share of the device's KV blocks, in [0, 1), that admitting `candidate`
  // must leave free, for requests the policy would rank ahead of it when
  // they come (a household keeps room for a voice command while documents
  // stream in, instead of evicting one to make it). A candidate that fits
  // only into the reserve is declined for this step; the core drops the
  // reserve when the candidate could never fit beside it. Default: 0.
  virtual double AdmissionReserveShare(const RequestView& candidate, absl::Time now);
  // How the core shares each step's token budget among prefills for this
  // policy (PrefillRules). Asked once, at construction of the scheduler.
  // Default: admission order, no background cap.
  virtual PrefillRules prefill_rules() const;

  // Picks a running request to preempt so that `beneficiary` can proceed, or
  // returns an invalid id when the policy ranks no running request below it.
  // `beneficiary_running` is true when a running request needs KV growth and
  // false when a waiting request asks to be admitted. The scheduler preempts
  // the beneficiary itself when a running beneficiary gets no victim and
  // memory is short; it never preempts for a waiting one without a victim.
  virtual RequestId PickVictim(RequestId beneficiary,
                               bool beneficiary_running) = 0;

  // Up to `out.size()` running requests the policy ranks after
  // `beneficiary`, each one it would accept as PickVictim's answer, the one
  // it values least first; returns how many it wrote. The default
  // ChooseVictim chooses among them by what preempting each costs, so a
  // policy that lists several avoids evicting a long context when a short
  // one frees enough. Default: PickVictim's one answer.
  virtual size_t VictimCandidates(RequestId beneficiary, bool beneficiary_running,
                                  absl::Span<RequestId> out);

  // The running request to preempt for `request`, or an invalid id for none:
  // the policy's whole answer, its order and its price. `costs` prices each
  // candidate as the core would preempt it (see PreemptionPrice); the core
  // preempts the answer only when costs.Price(answer).allowed, and otherwise
  // none. Asked when borrowed capacity (PickReclaimVictim) did not provide
  // the room; a request with reason kMemberShare comes first for a waiting
  // beneficiary, then one with kPolicyOrder. Default: CheapestVictim among
  // VictimCandidates' (kPolicyOrder) or ShareReclaimCandidates' (kMemberShare)
  // list.
  virtual RequestId ChooseVictim(const VictimRequest& request, const PreemptionCosts& costs);

  // Borrowed capacity (requests running beyond their class's limits, see
  // WorkClassConfig::borrow) is reclaimed before PickVictim is asked.
  // `borrowers` lists the running requests the core may reclaim for
  // `beneficiary`: each of a class still over its limits and other than the
  // beneficiary's, preempted fewer than twice so far, and not admitted or
  // swapped in during this step. They are the newest kMaxReclaimCandidates
  // such borrowers, in the order they started borrowing, oldest first;
  // never empty. Returns one of their ids, or an invalid id to reclaim none.
  // Default: the newest borrower.
  virtual RequestId PickReclaimVictim(const RequestView& beneficiary,
                                      absl::Span<const RequestView> borrowers);

  // Members' shares are reclaimed after borrowed capacity and before
  // VictimCandidates is asked, for a waiting `beneficiary` only: up to
  // `out.size()` running requests of other users whose eviction the
  // beneficiary's user is entitled to, because their user holds more than its
  // weighted part of the engine (the household policy's member guard,
  // PolicyTreeConfig::member_guard), the one the policy values least first;
  // returns how many. The default ChooseVictim chooses among them by cost as
  // it does among VictimCandidates', and the core allows a request to these
  // reclaims until it has been preempted kMaxShareReclaims times in all: a
  // bound of their own,
  // since a request too large for its user's share would otherwise soon be
  // immune (max_preemptions_per_request) and keep the others waiting for
  // its memory. Default: none.
  virtual size_t ShareReclaimCandidates(RequestId beneficiary, absl::Span<RequestId> out);

  // A running request of a class with a hard KV budget (borrow = false)
  // needs to grow and its class has no room left. Returns the running
  // request of the same class that yields its blocks; the core validates
  // the choice and falls back to the beneficiary. Default: the beneficiary
  // itself (growth within a hard budget is reserved at admission, so a
  // class's sequences never preempt each other by default).
  virtual RequestId PickClassLimitVictim(const RequestView& beneficiary);
};

// Preemptions after which a request is no longer offered to members' share
// reclaims (Policy::ShareReclaimCandidates).
inline constexpr int32_t kMaxShareReclaims = 8;

// How much earlier than its arrival the arrival-ordered policies rank a call
// of a running agent workflow (PolicyTreeConfig::workflow_head_start), by
// default: longer than an agent's usual tool time between calls, so a running
// agent's next call goes ahead of work that arrived meanwhile; bounded, so
// that long-lived chat histories do not outrank everything behind them and
// throughput stays that of FIFO.
inline constexpr absl::Duration kDefaultWorkflowHeadStart = absl::Seconds(30);

struct SchedulerOptions;

// How many borrowers PickReclaimVictim is offered at most: the newest ones,
// which lose the least work and are the ones borrowing beyond the limits.
inline constexpr int32_t kMaxReclaimCandidates = 8;

// How many victims VictimCandidates is asked for at most.
inline constexpr int32_t kMaxVictimCandidates = 4;

// Builds a fresh policy for one scheduler. Called once per Scheduler, from
// Scheduler::Create, with the scheduler's options: a policy reads what it
// needs from them (user weights, work-class priorities) instead of the host
// copying it into the policy's configuration. The reference is valid only
// during the call; a policy copies what it keeps.
using PolicyFactory =
    std::function<std::unique_ptr<Policy>(const SchedulerOptions&)>;

}  // namespace hearth

#endif  // HEARTH_POLICY_POLICY_H_

// File: hearth/policy/policy.h
//
// `Policy` is the one seam where ordering decisions live: which waiting
// request to admit next and which running request to preempt. The scheduler
// core owns all state and validates every decision against the token budget,
// the sequence cap and free KV blocks; a policy only ranks.
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
// OnRemoved is called exactly once, from either state.
//
// Thread-safety: all calls come from the engine thread (inside Plan/Complete);
// implementations need no locking.
//
// Example (a policy of one's own):
//   class Newest : public hearth::Policy { ... };
//   options.policy_factory = [] { return std::make_unique<Newest>(); };

#ifndef HEARTH_POLICY_POLICY_H_
#define HEARTH_POLICY_POLICY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_view.h"

namespace hearth {

// Service one request received in one completed step.
struct ServedTokens {
  RequestId id;
  UserId user;
  WorkClassId work_class;
  // Prompt (or recomputed) positions processed this step.
  int32_t prefill_tokens = 0;
  // 1 when this step was a decode step for the request, else 0.
  int32_t decode_tokens = 0;
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

  // Picks a running request to preempt so that `beneficiary` can proceed, or
  // returns an invalid id when the policy ranks no running request below it.
  // `beneficiary_running` is true when a running request needs KV growth and
  // false when a waiting request asks to be admitted. The scheduler preempts
  // the beneficiary itself when a running beneficiary gets no victim and
  // memory is short; it never preempts for a waiting one without a victim.
  virtual RequestId PickVictim(RequestId beneficiary,
                               bool beneficiary_running) = 0;

  // Borrowed capacity is reclaimed before PickVictim is asked. `borrowers`
  // are the running requests the core may reclaim for `beneficiary`, oldest
  // borrower first. Returns one of their ids, or an invalid id for none.
  // Default: the newest borrower.
  virtual RequestId PickReclaimVictim(const RequestView& beneficiary,
                                      absl::Span<const RequestView> borrowers) {
    return borrowers.empty() ? RequestId() : borrowers.back().id;
  }
  // A request of a hard-budget class cannot grow within the budget: the
  // running request of its class that yields. Default: the beneficiary.
  virtual RequestId PickClassLimitVictim(const RequestView& beneficiary) {
    return beneficiary.id;
  }
};

// How much earlier than its arrival the arrival-ordered policies rank a call
// of a running agent workflow (PolicyTreeConfig::workflow_head_start), by
// default: longer than an agent's usual tool time between calls, short
// enough that the household evening at 90% load keeps FIFO's throughput (an
// unbounded head start cost 3% of it by promoting long chat histories).
inline constexpr absl::Duration kDefaultWorkflowHeadStart = absl::Seconds(30);

// Builds a fresh policy for one scheduler. Called once per Scheduler.
using PolicyFactory = std::function<std::unique_ptr<Policy>()>;

}  // namespace hearth

#endif  // HEARTH_POLICY_POLICY_H_

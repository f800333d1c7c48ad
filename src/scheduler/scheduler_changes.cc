// Scheduler::Impl live changes: a host's SetPriority / SetWorkClass of a
// request already taken in, applied at the start of a Plan (before deadlines
// and admission), so that the step sees the request where it now belongs.
// A running request keeps its KV and progress; only its class accounting
// moves, unless its new class can never hold it beside what that class
// already runs, when it yields as its class's own growth would.

#include <algorithm>
#include <cstdint>
#include <utility>

#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;
using internal::RunList;

void Scheduler::Impl::ApplyChange(const internal::RequestChange& change, absl::Time now) {
  RequestRecord* r = Find(change.id);
  // Ended since (its last token, a deadline, a failure): that ending stands.
  if (r == nullptr) return;
  // Changes first, so the released request arrives at the policy as it is.
  ApplyLiveChange(*r, change, now);
  if (change.release && r->phase == RequestPhase::kHeld) MakeRunnable(*r, now);
}

void Scheduler::Impl::ApplyLiveChange(RequestRecord& r, const internal::RequestChange& change,
                                      absl::Time now) {
  const bool priority_changes = change.priority && *change.priority != r.priority;
  const bool class_changes = change.work_class && *change.work_class != r.work_class;
  if (!priority_changes && !class_changes) return;
  if (priority_changes) r.priority = *change.priority;
  if (class_changes) MoveToClass(r, *change.work_class, now);
  // Held and preparing requests are announced to the policy when they
  // become runnable, with what they are then; MoveToClass may have
  // preempted `r`, which the policy has been told of already.
  const bool known = r.phase == RequestPhase::kWaiting || r.phase == RequestPhase::kRunning ||
                     r.phase == RequestPhase::kSwapped;
  if (known) policy_->OnChanged(ViewOf(r), now);
}

void Scheduler::Impl::MoveToClass(RequestRecord& r, WorkClassId to, absl::Time now) {
  const uint32_t from = r.work_class.value();
  const uint32_t cls = to.value();
  const bool running = r.list != RunList::kNone;
  const int32_t max_blocks = BlocksFor(r.prompt_tokens + r.max_new_tokens);
  if (running) {
    // Could it have been admitted to the new class? A class that may not
    // borrow takes no sequence beyond its limits, and a hard KV budget
    // keeps a reservation for each of its sequences.
    const bool fits = capacity_.Within(cls, 1, r.kv.num_blocks()) || capacity_.may_borrow(cls);
    if (!fits || kv_.classes().ReservationFor(cls, max_blocks) < 0) {
      // Preempted (swapped when it pays) under its old class's accounting;
      // it then waits to be admitted under the new class's rules.
      Preempt(r, now);
    }
  }
  kv_.MoveClass(r.kv, from, cls, r.list != RunList::kNone, max_blocks);
  if (r.list != RunList::kNone) {
    capacity_.AddRunning(from, -1);
    capacity_.AddRunning(cls, 1);
    capacity_.ClearBorrowing(r.slot);
  }
  r.work_class = to;
  if (r.list != RunList::kNone && capacity_.Over(cls)) capacity_.MarkBorrowing(r.slot);
  const absl::Time queue_deadline = r.queue_deadline;
  ResolveClassTargets(r);
  // Only a request never admitted can time out in the queue; an earlier
  // entry for its old deadline is skipped when it falls due (ExpireOne).
  if (r.queue_deadline != queue_deadline && r.first_admit_time == absl::InfiniteFuture()) {
    WatchDeadline(r.queue_deadline, r.id);
  }
}

void Scheduler::Impl::ResolveClassTargets(RequestRecord& r) {
  const WorkClassConfig& cls = options_.work_classes[r.work_class.value()];
  if (!r.own_ttft_slo) r.ttft_slo = cls.ttft_slo;
  if (!r.own_tpot_slo) r.tpot_slo = cls.tpot_slo;
  r.ttft_deadline = r.ttft_slo == absl::InfiniteDuration() ? absl::InfiniteFuture()
                                                           : r.arrival_time + r.ttft_slo;
  r.queue_deadline = cls.queue_timeout == absl::InfiniteDuration()
                         ? absl::InfiniteFuture()
                         : r.arrival_time + cls.queue_timeout;
}

}  // namespace hearth

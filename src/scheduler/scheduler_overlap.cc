// Scheduler::Impl overlapped planning (SchedulerOptions::overlap_planning):
// Plan() for step N+1 while step N runs on the engine.
//
// The plan in flight is left to run as made. Its sequences are planned
// ahead from where that step leaves them (Project): a prefill's next chunk,
// or a decode whose input is the token step N samples (input_pending).
// Whatever ends a request or takes it off the device while a plan holding it
// is outstanding voids that entry (VoidOutstandingEntry): Complete() skips
// it, and the plan's `voided` tells the engine. A preempted sequence thus
// loses its in-flight token, as it loses its KV, and recomputes it; refusing
// to preempt in-flight sequences instead would leave no victim at all in
// steady state, where every running sequence is in every step. Blocks
// freed meanwhile may be reused by the next plan at once: the engine runs
// plans in order, so its writes of step N land before step N+1 reuses them,
// and they never touch a block the prefix cache holds (only positions past
// the computed prefix are written).

#include <algorithm>

#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;
using internal::RunList;

void Scheduler::Impl::BeginPlanAhead() {
  // step_.plan is the plan in flight; the new one goes into the other buffer.
  // Its records keep their step and index there until this plan schedules
  // them (InFlightIndex); VoidInFlightOf finds it for those it does.
  step_.in_flight_step = step_.plan->step;
  // Host blocks deferred until now wait for the step in flight's copies;
  // those this plan defers wait for its own.
  step_.host_deferred_in_flight = kv_.deferred_host_releases().size();
  SelectBuffer(other_index());
}

bool Scheduler::Impl::Project(const RequestRecord& r, int32_t index, Projection* out) const {
  const ScheduledSequence& s =
      step_.buffers[other_index()].plan.sequences[static_cast<size_t>(index)];
  // How many drafts the engine accepts is known only at Complete; a pooling
  // step ends its request.
  if (s.draft_tokens > 0 || s.pool) return false;
  out->computed = s.start_position + s.num_tokens;
  out->length = r.length();
  out->input_pending = s.sample;
  if (!s.sample) return true;
  ++out->length;
  return RoomAfterPending(r, *out);
}

void Scheduler::Impl::ScheduleFirstDecodes(absl::Time now) {
  // Prefills whose chunk in flight samples their first token are decodes
  // from this plan on; they join the decode segment. O(prefilling).
  step_.snapshot.assign(table_.prefilling().begin(), table_.prefilling().end());
  for (uint32_t slot : step_.snapshot) {
    if (tokens_.left() <= 0) break;
    RequestRecord& r = table_[slot];
    const int32_t index = InFlightIndex(r);
    if (r.list != RunList::kPrefilling || index < 0 || ScheduledNow(r)) continue;
    Projection at;
    if (!Project(r, index, &at) || !at.input_pending) continue;
    const int32_t capacity = r.kv.num_blocks() * limits_.block_size;
    const int32_t got = at.computed + 1 <= capacity
                            ? at.computed + 1
                            : GrowTo(r, at.computed + 1, at.computed + 1, now);
    if (got <= at.computed) continue;
    ScheduleProjected(r, at, 1);
  }
}

void Scheduler::Impl::VoidOutstandingEntry(RequestRecord& r) {
  if (step_.planning) {
    // Not scheduled by this plan (Unschedule voids those it had scheduled).
    const int32_t index = InFlightIndex(r);
    if (index >= 0) VoidOtherEntry(r, index);
    return;
  }
  // Complete() of the older plan: the newer one may hold it too.
  if (step_.outstanding == 2 && r.scheduled_step == other_buffer().plan.step) {
    VoidOtherEntry(r, r.plan_index);
  }
}

void Scheduler::Impl::VoidInFlightOf(RequestRecord& r) {
  // A preemption of a sequence this plan scheduled: rare enough that a scan
  // of the step in flight (O(its batch)) costs less than keeping every
  // entry's index there. A slot in it is r's: an earlier holder of the slot
  // left that step voided before the slot was reused.
  const std::vector<uint32_t>& slots = other_buffer().slots;
  const auto it = std::find(slots.begin(), slots.end(), r.slot);
  if (it != slots.end()) VoidOtherEntry(r, static_cast<int32_t>(it - slots.begin()));
}

void Scheduler::Impl::VoidOtherEntry(RequestRecord& r, int32_t index) {
  internal::PlanBuffer& other = other_buffer();
  other.slots[static_cast<size_t>(index)] = internal::kVoidSlot;
  other.plan.voided.push_back({r.id, r.handle});
}

}  // namespace hearth

// Scheduler::Impl::Plan and its phases: drain the inbox, expire deadlines,
// decodes first (stall-free), continuing prefill chunks, admissions
// (scheduler_admission.cc) under the token budget, the sequence cap and
// memory, then emit the plan.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;
using internal::RunList;

absl::StatusOr<const StepPlan*> Scheduler::Impl::Plan(absl::Time now) {
  if (step_.outstanding == 2 || (step_.outstanding == 1 && !options_.overlap_planning)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "step ", step_.plan->step, " is still outstanding",
        step_.outstanding == 2 ? " behind the step before it" : "",
        "; call Complete() with its outcome before planning the next step",
        options_.overlap_planning ? "" : " (SchedulerOptions::overlap_planning allows one more)"));
  }
  if (now < step_.last_now) {
    return absl::InvalidArgumentError(
        absl::StrCat("now (", absl::FormatTime(now), ") is before the previous step's time (",
                     absl::FormatTime(step_.last_now), "); time must not go backwards"));
  }
  if (now == absl::InfiniteFuture() || now == absl::InfinitePast()) {
    return absl::InvalidArgumentError("now must be a finite time");
  }
  // The engine's completion stamps may run ahead of the host's clock: a
  // step is planned no earlier than the latest step ended (step_outcome.h).
  now = std::max(now, step_.latest_done);
  if (step_.outstanding == 1) BeginPlanAhead();
  StartPlan(now);
  DrainInbox(now);
  ExpireDeadlines(now);
  residency_.PlanUnloads(now, &step_.plan->model_commands);
  step_.segment = 0;
  ScheduleRunning(RunList::kDecoding, now);
  if (step_.outstanding == 1) ScheduleFirstDecodes(now);
  EndPlanSegment();
  ScheduleRunning(RunList::kPrefilling, now);
  EndPlanSegment();
  DemoteUnloaded(now);
  AdmitWaiting(now);
  DemoteUnloaded(now);
  residency_.PlanLoads(kv_.allocator().num_owned(), &step_.plan->model_commands);
  PlanDrafts();
  FinalizePlan();
  step_.planning = false;
  step_.in_flight_step = UINT64_MAX;
  ++step_.outstanding;
  return step_.plan;
}

void Scheduler::Impl::StartPlan(absl::Time now) {
  step_.last_now = now;
  step_.plan->step = ++stats_.counters.steps;
  step_.plan->now = now;
  step_.plan->sequences.clear();
  step_.plan->preempted.clear();
  step_.plan->released.clear();
  step_.plan->swap_out.clear();
  step_.plan->swap_in.clear();
  step_.plan->copy_on_write.clear();
  step_.plan->model_commands.clear();
  step_.plan->voided.clear();
  step_.plan->num_batched_tokens = 0;
  step_.plan->num_decodes = 0;
  step_.plan->encoder_inputs.clear();
  step_.plan->encoder_frees.clear();
  step_.plan->num_encoder_tokens = 0;
  encoder_.StartStep(step_.plan);
  step_.slots->clear();
  step_.draft_room.clear();
  // A request waiting at a span it could not fit (EncoderPlanner) sizes
  // the step to hold that span beside the decodes, while it lives.
  if (encoder_.waiter().valid() && Find(encoder_.waiter()) == nullptr) encoder_.ClearWaiter();
  tokens_.StartStep(static_cast<int32_t>(table_.decoding().size()), options_.max_batched_tokens,
                    std::max(limits_.block_size, encoder_.waiter_tokens()));
  step_.planning = true;
}

void Scheduler::Impl::ScheduleRunning(RunList which, absl::Time now) {
  const std::vector<uint32_t>& list = table_.list(which);
  // Preemptions reorder the list (swap-removal), so walk a copy and skip
  // entries that left the list or were already scheduled.
  step_.snapshot.assign(list.begin(), list.end());
  // Locals, as in Complete: neither vector is resized inside the loop.
  RequestRecord* slab = table_.data();
  if (which == RunList::kPrefilling && tokens_.prefill_rules().by_deadline) {
    std::sort(step_.snapshot.begin(), step_.snapshot.end(), [slab](uint32_t a, uint32_t b) {
      return std::tie(slab[a].ttft_deadline, slab[a].arrival_seq) <
             std::tie(slab[b].ttft_deadline, slab[b].arrival_seq);
    });
  }
  // The request waiting at a span goes first, before others take the
  // step's tokens and encoder budget (EncoderPlanner::NoteBlocked).
  if (which == RunList::kPrefilling && encoder_.waiter().valid()) {
    const RequestId waiter = encoder_.waiter();
    const auto it = std::find_if(step_.snapshot.begin(), step_.snapshot.end(),
                                 [&](uint32_t slot) { return slab[slot].id == waiter; });
    if (it != step_.snapshot.end()) std::rotate(step_.snapshot.begin(), it, it + 1);
  }
  // Two instances of one loop: with a plan in flight every record is checked
  // against it; without one (no overlap) that check costs nothing.
  if (step_.in_flight_step == UINT64_MAX) {
    WalkRunning<false>(which, now);
  } else {
    WalkRunning<true>(which, now);
  }
}

template <bool kAhead>
void Scheduler::Impl::WalkRunning(RunList which, absl::Time now) {
  RequestRecord* slab = table_.data();
  const uint32_t* slots = step_.snapshot.data();
  const size_t n = step_.snapshot.size();
  // Fixed for the loop, though stores through records could alias them.
  const uint64_t step = step_.plan->step;
  const uint64_t in_flight = step_.in_flight_step;
  for (size_t i = 0; i < n; ++i) {
    if (tokens_.left() <= 0) break;
    // Running records sit wherever their requests arrived in the slab; under
    // policies that rotate the running set they are scattered, and the loop
    // waits on memory: fetch a few records ahead.
    if (i + kRecordPrefetch < n) Prefetch(slots[i + kRecordPrefetch], 2);
    RequestRecord& r = slab[slots[i]];
    if (r.list != which || r.scheduled_step == step) continue;
    Projection at{r.computed, r.length(), false};
    const bool ahead = kAhead && r.scheduled_step == in_flight;
    if (ahead && !ProjectAhead(r, which, &at)) continue;
    int32_t want = which == RunList::kDecoding
                       ? 1
                       : tokens_.PrefillRoom(at.length - at.computed, limits_.chunk_cap,
                                             Background(r));
    if (which == RunList::kPrefilling && r.has_spans && want > 0) {
      want = CutToSpans(r, at.computed, want);
    }
    if (want <= 0) continue;
    // Most decode steps fit the last block: skip the growth path entirely.
    const int32_t capacity = r.kv.num_blocks() * limits_.block_size;
    int32_t got = at.computed + want;
    if (got > capacity) {
      const int32_t min = r.has_spans ? internal::EncoderPlanner::MinEnd(r.spans, at.computed)
                                      : at.computed + 1;
      got = GrowTo(r, got, std::min(min, got), now);
      // Less memory than asked: the chunk ends where no span is split.
      if (r.has_spans && got > at.computed && got < at.computed + want) {
        got = encoder_.CutChunk(r.spans, at.computed, got, got);
      }
    }
    if (got <= at.computed) continue;
    if constexpr (kAhead) {
      EmitSequence(r, at, got - at.computed);
    } else {
      ScheduleSequence(r, got - at.computed);
    }
  }
}

int32_t Scheduler::Impl::GrowTo(RequestRecord& r, int32_t want, int32_t min, absl::Time now) {
  const uint32_t cls = r.work_class.value();
  if (kv_.classes().has_hard_budget(cls)) {
    want = CapToHardBudget(r, want, min, now);
    if (want < 0) return -1;
  }
  while (true) {
    const int32_t need_min = kv_.BlocksShort(r.kv, min);
    if (need_min > Allocatable() && need_min <= kv_.allocator().num_allocatable()) {
      // Unload models nobody is running before preempting anyone.
      MakeRoomInMemory(need_min, r.model);
    }
    const int32_t held = r.kv.num_blocks();
    const int32_t positions = kv_.Grow(r.kv, cls, want, min, residency_.kv_block_limit());
    if (positions >= 0) {
      if (r.kv.num_blocks() > held && capacity_.Over(cls)) capacity_.MarkBorrowing(r.slot);
      return positions;
    }
    // Borrowed capacity is reclaimed before the policy is asked, but only
    // for growth within the class's entitlement: two classes that each need
    // more than their budget would otherwise take turns reclaiming from each
    // other forever.
    RequestRecord* victim =
        capacity_.Within(cls, 0, need_min) ? PickReclaimVictim(r) : nullptr;
    if (victim == nullptr) victim = PickVictim(r, /*beneficiary_running=*/true, need_min);
    if (victim != nullptr) {
      Preempt(*victim, now);
      continue;
    }
    // Nobody ranks below this request: it yields its own memory so that
    // higher-ranked sequences can progress.
    Preempt(r, now);
    return -1;
  }
}

int32_t Scheduler::Impl::CapToHardBudget(RequestRecord& r, int32_t want, int32_t min,
                                         absl::Time now) {
  const uint32_t cls = r.work_class.value();
  while (true) {
    const int32_t capped = kv_.CapToHardBudget(r.kv, cls, want, min);
    if (capped >= 0) return capped;
    // The class is at its budget: one of its own sequences yields.
    RequestRecord& victim = PickClassLimitVictim(r);
    Preempt(victim, now);
    if (&victim == &r) return -1;
  }
}

void Scheduler::Impl::PlanDrafts() {
  // Drafts come last, from what the step has left once every decode,
  // continuing prefill, admission and model load has its tokens and
  // memory: a draft never takes what real work needs, and never preempts.
  const int32_t max_drafts = options_.max_draft_tokens;
  if (max_drafts == 0 || tokens_.left() <= 0 || step_.segment == 0) return;
  const size_t decodes = step_.segment_end[0];
  // Plan order: entries and their rooms are read in sequence; a record
  // only when its drafts need a block.
  for (size_t i = 0; i < decodes && tokens_.left() > 0; ++i) {
    ScheduledSequence& s = step_.plan->sequences[i];
    if (!s.decode) continue;
    int32_t drafts = std::min({max_drafts, tokens_.left(), step_.draft_room[i]});
    if (drafts <= 0) continue;
    const auto held = static_cast<int32_t>(s.block_table.size());
    if (s.start_position + 1 + drafts > held * limits_.block_size) {
      RequestRecord& r = table_[(*step_.slots)[i]];
      // Only blocks beyond the watermark, and within the class's limits.
      const uint32_t cls = r.work_class.value();
      if (kv_.GrowForDrafts(r.kv, cls, s.start_position + 1 + drafts, residency_.kv_block_limit(),
                            capacity_.RunningWithin(cls, 0)) > 0) {
        kv_.ExtendTables(r.kv, s);
      }
      drafts = std::min(drafts, r.kv.num_blocks() * limits_.block_size - s.start_position - 1);
      if (drafts <= 0) continue;
    }
    s.draft_tokens = static_cast<int8_t>(drafts);
    tokens_.Take(drafts, /*background_prefill=*/false);
    step_.plan->num_batched_tokens += drafts;
  }
}

[[gnu::always_inline]] inline void Scheduler::Impl::EmitSequence(RequestRecord& r,
                                                                 const Projection& at,
                                                                 int32_t num_tokens) {
  // Everything this step allocates for `r` happened before this call, and
  // neither its block table nor its tokens reallocate (reserved at
  // arrival), so the spans can be filled in now.
  const bool decode =
      at.input_pending || (num_tokens == 1 && r.output_tokens > 0 && at.computed == at.length - 1);
  StepPlan& plan = *step_.plan;
  r.plan_index = static_cast<int32_t>(plan.sequences.size());
  r.scheduled_step = plan.step;
  ScheduledSequence& s = plan.sequences.emplace_back();
  s.id = r.id;
  s.handle = r.handle;
  s.model = r.model;
  s.start_position = at.computed;
  s.num_tokens = num_tokens;
  const bool reaches_end = at.computed + num_tokens == at.length;
  s.sample = reaches_end && !r.embed;
  s.decode = decode;
  s.input_pending = at.input_pending;
  s.embed = r.embed;
  s.mean_pool = r.mean_pool;
  s.pool = reaches_end && r.embed;
  kv_.FillTables(r.kv, s);
  if (r.has_spans && !decode) {
    encoder_.Emit(r.spans, r.id, r.handle, at.computed, at.computed + num_tokens, &plan);
  }
  if (r.has_token_ids && !at.input_pending) {
    s.token_ids = absl::Span<const TokenId>(r.tokens.data() + at.computed,
                                            static_cast<size_t>(num_tokens));
  }
  step_.slots->push_back(r.slot);
  if (options_.max_draft_tokens > 0) {
    // What PlanDrafts may give it, read now while the record is at hand:
    // never past the request's last token or its model's context (every
    // accepted draft is one more token; a pending input is one already).
    const int32_t produced = r.output_tokens + (at.input_pending ? 1 : 0);
    step_.draft_room.push_back(decode
                                   ? std::min(r.max_new_tokens - produced,
                                              limits_.context_length[r.model.value()] - at.length) -
                                         1
                                   : 0);
  }
  tokens_.Take(num_tokens, !decode && Background(r));
  plan.num_batched_tokens += num_tokens;
  plan.num_decodes += decode ? 1 : 0;
}

int32_t Scheduler::Impl::CutToSpans(const RequestRecord& r, int32_t computed, int32_t want) {
  // A span longer than the chunk cap or the background share would never
  // start within them: the chunk that reaches it may take it whole from
  // the step's tokens (each prompt's spans fit one step: ValidateSpec).
  int32_t blocked = 0;
  const int32_t end = encoder_.CutChunk(r.spans, computed, computed + want,
                                        computed + tokens_.left(), &blocked);
  if (end == computed && blocked > 0) encoder_.NoteBlocked(r.id, blocked);
  return end - computed;
}

void Scheduler::Impl::ScheduleSequence(RequestRecord& r, int32_t num_tokens) {
  EmitSequence(r, {r.computed, r.length(), false}, num_tokens);
}

void Scheduler::Impl::ScheduleProjected(RequestRecord& r, const Projection& at,
                                        int32_t num_tokens) {
  EmitSequence(r, at, num_tokens);
}

void Scheduler::Impl::Unschedule(RequestRecord& r) {
  const auto index = static_cast<size_t>(r.plan_index);
  // Leaving the running set after this plan scheduled it: its entry in the
  // step in flight, if any, is voided here, while it is still known to be
  // scheduled now.
  if (step_.in_flight_step != UINT64_MAX) VoidInFlightOf(r);
  const ScheduledSequence& s = step_.plan->sequences[index];
  tokens_.GiveBack(s.num_tokens + s.draft_tokens);
  step_.plan->num_batched_tokens -= s.num_tokens + s.draft_tokens;
  if (s.decode) --step_.plan->num_decodes;
  RemovePlanEntry(index);
  r.plan_index = -1;
  r.scheduled_step = 0;
}

void Scheduler::Impl::EndPlanSegment() {
  step_.segment_end[step_.segment++] = step_.plan->sequences.size();
}

void Scheduler::Impl::RemovePlanEntry(size_t index) {
  // O(1) and order-keeping where the plan promises order: each closed
  // segment from the hole's own onward hands its last entry to the slot
  // vacated before it, so decodes, continuing prefills and admissions stay
  // contiguous and in that order (within a segment nothing is promised).
  size_t hole = index;
  for (int s = 0; s < step_.segment; ++s) {
    if (step_.segment_end[s] <= hole) continue;
    const size_t last = --step_.segment_end[s];
    MovePlanEntry(last, hole);
    hole = last;
  }
  MovePlanEntry(step_.plan->sequences.size() - 1, hole);
  step_.plan->sequences.pop_back();
  step_.slots->pop_back();
  if (!step_.draft_room.empty()) step_.draft_room.pop_back();
}

void Scheduler::Impl::MovePlanEntry(size_t from, size_t to) {
  if (from == to) return;
  step_.plan->sequences[to] = step_.plan->sequences[from];
  (*step_.slots)[to] = (*step_.slots)[from];
  if (!step_.draft_room.empty()) step_.draft_room[to] = step_.draft_room[from];
  table_[(*step_.slots)[to]].plan_index = static_cast<int32_t>(to);
}

void Scheduler::Impl::FinalizePlan() {
  step_.plan->released.swap(outputs_.to_release);
  outputs_.to_release.clear();
  step_.plan->preempted.insert(step_.plan->preempted.end(), outputs_.pending_drops.begin(),
                               outputs_.pending_drops.end());
  outputs_.pending_drops.clear();
}

// TPOT is a mean over a request's tokens after its first, so a request that
// ran ahead of its target can afford a longer step and one that fell behind
// needs shorter ones: token k+1 after the first is due at first_token_time +
// k x target, and the next step may last until the earliest such due time
// among the decoding requests with a target. A request far behind would pull
// every step down to decodes alone for the rest of its life; its allowance is
// floored at half its target. O(this step's sequences), which the step
// visits anyway.
absl::Duration Scheduler::Impl::TpotStepAllowance(absl::Time done) const {
  absl::Duration allowance = absl::InfiniteDuration();
  const RequestRecord* slab = table_.data();
  for (uint32_t slot : *step_.slots) {
    if (slot == internal::kVoidSlot) continue;
    const RequestRecord& r = slab[slot];
    if (r.list != internal::RunList::kDecoding || r.awaiting_first_token) continue;
    const absl::Duration target = tokens_.tpot_of(r.work_class.value());
    if (target == absl::InfiniteDuration()) continue;
    const absl::Duration due = (r.first_token_time - done) + target * r.output_tokens;
    allowance = std::min(allowance, std::max(due, target / 2));
  }
  return allowance;
}

}  // namespace hearth

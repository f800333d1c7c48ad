// Scheduler::Impl admission and victims: the policy offers waiting requests
// in its order; each is admitted if its class's limits (ClassCapacity) and
// memory allow, with borrowed capacity reclaimed and policy-chosen victims
// preempted for those entitled to room. Every victim the policy names is
// validated here before anything is preempted.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;

void Scheduler::Impl::AdmitWaiting(absl::Time now) {
  if (count(RequestPhase::kWaiting) + count(RequestPhase::kSwapped) == 0 || tokens_.left() <= 0) {
    return;
  }
  policy_->BeginAdmission(now);
  AdmitSpanWaiter(now);
  int32_t declines = 0;
  // Room for the decoding sequences to grow (KvCacheManager::
  // GrowthHeadroom); once a head is passed, twice that and at least
  // a block each: the head would have left the memory it waits for as a
  // buffer, backfilled requests take it, and their growth then preempts
  // (often the request just backfilled): with the headroom alone, an agent
  // batch near capacity preempted several times as often as FIFO, doubled
  // as often (figures: bench/RESULTS.md, "Figures behind the rules").
  int32_t spare_blocks = kv_.GrowthHeadroom(table_.decoding().size());
  bool backfilling = false;
  while (tokens_.left() > 0) {
    const RequestId id = policy_->NextAdmission();
    if (!id.valid()) break;
    RequestRecord* r = Find(id);
    Admission result = Admission::kDeclined;
    // Not readmitted in the step that preempted it: that would only undo
    // the preemption that made room for someone else.
    if (r != nullptr && r->preempted_step != step_.plan->step &&
        (r->phase == RequestPhase::kWaiting || r->phase == RequestPhase::kSwapped)) {
      result = TryAdmit(*r, now, spare_blocks);
    }
    if (result == Admission::kAdmitted) continue;
    // The policy's first candidate waits for an adapter slot of the running
    // set: admitting others would keep their adapters running, and the slot
    // might never free (ResidencyConfig::max_adapters_per_step).
    if (result == Admission::kAdapterBusy) {
      if (declines == 0 && !backfilling) break;
      result = Admission::kDeclined;
    }
    // Particular to this candidate (its class is at a hard limit or may only
    // borrow idle capacity; it was preempted this very step; or, a policy
    // bug, it is not waiting), or, past a waiting head, no room: offer the
    // next one, boundedly. A backfilled request never preempts: the head it
    // passed found no victim, and it ranks after the head.
    if (result == Admission::kDeclined || backfilling) {
      if (++declines > options_.max_admission_declines) break;
      policy_->Decline(id);
      continue;
    }
    if (RequestRecord* victim = AdmissionVictim(*r)) {
      Preempt(*victim, now);
      continue;
    }
    // No room and nobody to evict: the head waits for room, and the rest wait
    // behind it unless the policy lets them pass (bounded like declines).
    if (++declines > options_.max_admission_declines || !StartsBackfill(*r, now, &spare_blocks)) {
      break;
    }
    backfilling = true;
    policy_->Decline(id);
  }
  policy_->EndAdmission();
}

void Scheduler::Impl::AdmitSpanWaiter(absl::Time now) {
  // A request waiting at a span (EncoderPlanner::NoteBlocked) is tried
  // first: the policy's order reached it before, and behind others it
  // would find the step's tokens or encoder budget taken again.
  if (!encoder_.waiter().valid()) return;
  RequestRecord* w = Find(encoder_.waiter());
  if (w == nullptr || w->preempted_step == step_.plan->step ||
      (w->phase != RequestPhase::kWaiting && w->phase != RequestPhase::kSwapped)) {
    return;
  }
  (void)TryAdmit(*w, now, kv_.GrowthHeadroom(table_.decoding().size()));
}

RequestRecord* Scheduler::Impl::AdmissionVictim(RequestRecord& r) {
  // Borrowed capacity is reclaimed first, then members' shares, then the
  // policy's order is asked.
  RequestRecord* victim = PickReclaimVictim(r);
  if (victim != nullptr) return victim;
  // What admission takes for it: the first chunk's blocks and the rest of
  // its prefill, reserved at once (TryAdmit).
  const int32_t need_blocks = MeasureAdmission(r).kv.blocks_claimed();
  victim = PickShareVictim(r, need_blocks);
  if (victim != nullptr) return victim;
  return PickVictim(r, /*beneficiary_running=*/false, need_blocks);
}

bool Scheduler::Impl::StartsBackfill(const RequestRecord& head, absl::Time now,
                                     int32_t* spare_blocks) {
  if (!policy_->MayAdmitPast(ViewOf(head), now)) return false;
  *spare_blocks = std::max(2 * *spare_blocks, static_cast<int32_t>(table_.decoding().size()));
  // When nobody behind it could start either, a step's worth of declines
  // (each taking a request out of the policy's order and back) buys nothing.
  return running_count() < options_.max_running &&
         Allocatable() > *spare_blocks + kv_.prefill_reserved();
}

Scheduler::Impl::AdmissionNeed Scheduler::Impl::MeasureAdmission(RequestRecord& r) {
  AdmissionNeed need;
  internal::AdmissionQuery& q = need.query;
  q.work_class = r.work_class.value();
  q.length = r.length();
  q.computed = r.computed;
  q.max_positions = r.prompt_tokens + r.max_new_tokens;
  q.swapped = r.phase == RequestPhase::kSwapped;
  q.has_output = r.output_tokens > 0;
  if (r.has_token_ids) q.tokens = r.tokens;
  // A swapped-in request that was decoding resumes with its decode, which
  // the background prefill cap does not limit (TryAdmit lets it past a
  // spent cap): capped, its chunk would be 0 tokens.
  q.max_chunk = tokens_.PrefillRoom(INT32_MAX, limits_.chunk_cap, Background(r) && !r.decoding());
  need.kv = kv_.MeasureAdmission(r.kv, q);
  if (r.has_spans) {
    const int32_t chunk = CutToSpans(r, need.kv.start, need.kv.chunk);
    if (chunk != need.kv.chunk) kv_.SetChunk(r.kv, q, chunk, &need.kv);
  }
  need.beyond_limits = !capacity_.Within(q.work_class, 1, need.kv.total_blocks);
  return need;
}

Scheduler::Impl::Admission Scheduler::Impl::TryAdmit(RequestRecord& r, absl::Time now,
                                                     int32_t spare_blocks) {
  // Its model was unloaded this step to make room; it goes back to preparing.
  if (!residency_.ready(r.model)) return Admission::kDeclined;
  // Its adapter would be one more than a step's batch may mix.
  if (!residency_.AdmitsAdapter(r.model)) return Admission::kAdapterBusy;
  // Background prefill has had its share of this step.
  if (Background(r) && tokens_.BackgroundSpent() && !r.decoding()) return Admission::kDeclined;
  const AdmissionNeed need = MeasureAdmission(r);
  // Its first span does not fit this step's encoder budget or tokens.
  if (need.kv.chunk <= 0) return Admission::kDeclined;
  // Within its class's limits a request is entitled to room (and may cause
  // preemption); beyond them it only borrows what is idle.
  if (need.beyond_limits && !capacity_.may_borrow(r.work_class.value())) {
    return Admission::kDeclined;
  }
  if (need.kv.class_reservation < 0) return Admission::kDeclined;
  // Room for the whole remaining prefill, beside what earlier admitted
  // prefills still need, not just for this chunk: long prompts admitted
  // together on first-chunk room alone would overcommit the cache and
  // preempt each other round after round, losing all progress.
  const int32_t blocks = need.kv.blocks_claimed() + kv_.prefill_reserved() + spare_blocks;
  if (running_count() >= options_.max_running || !HasRoom(blocks, r.model)) {
    return need.beyond_limits ? Admission::kDeclined : Admission::kNoRoom;
  }
  // Room kept for requests the policy ranks ahead when they come: fitting
  // only into it is no entitlement to evict anyone. Dropped when the
  // request could never fit beside it.
  const double share = policy_->AdmissionReserveShare(ViewOf(r), now);
  if (share > 0) {
    const int32_t total = options_.kv.num_device_blocks;
    const int32_t reserve =
        static_cast<int32_t>(std::ceil(std::min(share, 1.0) * static_cast<double>(total)));
    if (blocks + reserve <= total && !HasRoom(blocks + reserve, r.model)) {
      return Admission::kDeclined;
    }
  }
  CommitAdmission(r, need, now);
  return Admission::kAdmitted;
}

void Scheduler::Impl::CommitAdmission(RequestRecord& r, const AdmissionNeed& need,
                                      absl::Time now) {
  kv_.Admit(r.kv, r.id, need.query, need.kv, step_.plan);
  if (!need.kv.swapped) {
    r.computed = need.kv.start;
    r.cached_prompt_tokens = std::min(need.kv.start, r.prompt_tokens);
    stats_.counters.prefix_hit_tokens += static_cast<uint64_t>(need.kv.start);
  }
  r.admitted_step = step_.plan->step;
  if (r.first_admit_time == absl::InfiniteFuture()) r.first_admit_time = now;
  StartRunning(r);
  if (need.beyond_limits) capacity_.MarkBorrowing(r.slot);
  SetPhase(r, RequestPhase::kRunning, now);
  Emit(RequestEventKind::kAdmit, r, now);
  ScheduleSequence(r, need.kv.chunk);
}

bool Scheduler::Impl::HasRoom(int32_t blocks, ModelId model) {
  const int32_t reserve = kv_.AdmissionHeadroom(running_count() > 0);
  if (Allocatable() - blocks >= reserve) return true;
  // Idle models' weights may be holding the memory; runnable work wins.
  if (kv_.allocator().num_allocatable() - blocks >= reserve &&
      MakeRoomInMemory(blocks + reserve, model)) {
    return Allocatable() - blocks >= reserve;
  }
  return false;
}

bool Scheduler::Impl::CanBeVictim(const RequestRecord& r) const {
  return internal::VictimPricing::Preemptible(r, {step_.plan->step, step_.planning});
}

RequestRecord* Scheduler::Impl::PickVictim(const RequestRecord& beneficiary,
                                           bool beneficiary_running, int32_t need_blocks) {
  const VictimRequest request{beneficiary.id, beneficiary_running, need_blocks,
                               VictimReason::kPolicyOrder};
  return ChosenVictim(request, options_.max_preemptions_per_request);
}

RequestRecord* Scheduler::Impl::PickShareVictim(const RequestRecord& beneficiary,
                                                int32_t need_blocks) {
  return ChosenVictim({beneficiary.id, false, need_blocks, VictimReason::kMemberShare},
                      kMaxShareReclaims);
}

RequestRecord* Scheduler::Impl::ChosenVictim(const VictimRequest& request,
                                             int32_t max_preemptions) {
  const internal::VictimPricing costs(table_, kv_, options_, {step_.plan->step, step_.planning},
                                      request, max_preemptions);
  // The policy chooses; the core preempts only what its own prices allow.
  const RequestId id = policy_->ChooseVictim(request, costs);
  return id.valid() && costs.Price(id).allowed ? Find(id) : nullptr;
}

RequestRecord* Scheduler::Impl::PickReclaimVictim(const RequestRecord& beneficiary) {
  // Newest first, only as far as the policy is offered borrowers; stale
  // marks it passes (classes back within their limits) are cleared on the
  // way. Borrowers it skips (preempted twice, or admitted this step) stay
  // listed, since their classes are still over their limits.
  step_.reclaimable_slots.clear();
  for (uint32_t slot = capacity_.last_borrower();
       slot != internal::ClassCapacity::kNone &&
       step_.reclaimable_slots.size() < static_cast<size_t>(kMaxReclaimCandidates);) {
    const uint32_t prev = capacity_.prev_borrower(slot);
    const RequestRecord& r = table_[slot];
    if (!capacity_.Over(r.work_class.value())) {
      capacity_.ClearBorrowing(slot);
    } else if (r.preemptions < internal::kMaxBorrowReclaims && &r != &beneficiary &&
               r.work_class != beneficiary.work_class && CanBeVictim(r)) {
      step_.reclaimable_slots.push_back(slot);
    }
    slot = prev;
  }
  if (step_.reclaimable_slots.empty()) return nullptr;
  std::reverse(step_.reclaimable_slots.begin(), step_.reclaimable_slots.end());
  step_.reclaimable.clear();
  for (uint32_t slot : step_.reclaimable_slots) step_.reclaimable.push_back(ViewOf(table_[slot]));
  const RequestId id = policy_->PickReclaimVictim(ViewOf(beneficiary), step_.reclaimable);
  if (!id.valid()) return nullptr;
  for (uint32_t slot : step_.reclaimable_slots) {
    if (table_[slot].id == id) return &table_[slot];
  }
  return nullptr;
}

RequestRecord& Scheduler::Impl::PickClassLimitVictim(RequestRecord& beneficiary) {
  RequestRecord* v = Find(policy_->PickClassLimitVictim(ViewOf(beneficiary)));
  if (v == nullptr || v->work_class != beneficiary.work_class || !CanBeVictim(*v)) {
    return beneficiary;
  }
  return *v;
}

}  // namespace hearth

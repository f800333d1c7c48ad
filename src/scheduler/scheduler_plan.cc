// Scheduler::Impl::Plan and its phases: drain the inbox, expire deadlines,
// decodes first (stall-free), continuing prefill chunks, admissions under the
// token budget, the sequence cap and memory, then emit the plan.

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;
using internal::RunList;

namespace {

// Min-heap order on deadlines.
struct LaterDeadline {
  bool operator()(const std::pair<absl::Time, RequestId>& a,
                  const std::pair<absl::Time, RequestId>& b) const {
    return a.first > b.first || (a.first == b.first && a.second > b.second);
  }
};

}  // namespace

absl::StatusOr<const StepPlan*> Scheduler::Impl::Plan(absl::Time now) {
  if (plan_outstanding_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "step ", plan_.step, " is still outstanding; call Complete() with its "
        "outcome before planning the next step"));
  }
  if (now < last_now_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "now (", absl::FormatTime(now), ") is before the previous step's time (",
        absl::FormatTime(last_now_), "); time must not go backwards"));
  }
  if (now == absl::InfiniteFuture() || now == absl::InfinitePast()) {
    return absl::InvalidArgumentError("now must be a finite time");
  }
  last_now_ = now;
  plan_.step = ++counters_.steps;
  plan_.now = now;
  plan_.sequences.clear();
  plan_.preempted.clear();
  plan_.released.clear();
  plan_.swap_out.clear();
  plan_.swap_in.clear();
  plan_.copy_on_write.clear();
  plan_.model_commands.clear();
  plan_.num_batched_tokens = 0;
  plan_.num_decodes = 0;
  plan_slots_.clear();
  budget_ = options_.max_batched_tokens;
  planning_ = true;

  DrainInbox(now);
  ExpireDeadlines(now);
  residency_.PlanUnloads(now, &plan_.model_commands);
  plan_segment_ = 0;
  ScheduleRunning(RunList::kDecoding, now);
  EndPlanSegment();
  ScheduleRunning(RunList::kPrefilling, now);
  EndPlanSegment();
  DemoteUnloaded(now);
  AdmitWaiting(now);
  DemoteUnloaded(now);
  residency_.PlanLoads(allocator_.num_owned(), &plan_.model_commands);
  FinalizePlan();
  planning_ = false;
  plan_outstanding_ = true;
  return &plan_;
}

void Scheduler::Impl::DrainInbox(absl::Time now) {
  inbox_.Drain(now, &drained_, &cancels_);
  // Host threads race to Submit; ordering a batch by stamped arrival time
  // (then id) makes arrival order, and so every arrival-ordered policy,
  // independent of that race whenever hosts stamp arrival times.
  if (drained_.size() > 1) {
    std::sort(drained_.begin(), drained_.end(),
              [](const internal::Submission& a, const internal::Submission& b) {
                return a.spec.arrival_time < b.spec.arrival_time ||
                       (a.spec.arrival_time == b.spec.arrival_time && a.id < b.id);
              });
  }
  workflows_.Expire(now);
  for (internal::Submission& sub : drained_) {
    RequestRecord& r = CreateRecord(sub, now);
    if (std::string refused = JoinWorkflow(r); !refused.empty()) {
      r.phase = RequestPhase::kQueued;
      residency_.AddLive(r.model);
      Emit(RequestEventKind::kArrive, r, now);
      Terminate(r, RequestPhase::kRejected, FinishReason::kNone, std::move(refused), now);
      continue;
    }
    for (absl::Time t : {r.deadline, r.queue_deadline}) {
      if (t == absl::InfiniteFuture()) continue;
      deadlines_.emplace_back(t, r.id);
      std::push_heap(deadlines_.begin(), deadlines_.end(), LaterDeadline());
    }
    residency_.AddLive(r.model);
    Emit(RequestEventKind::kArrive, r, now);
    if (!residency_.ready(r.model)) {
      // Not runnable yet: it waits apart, so it never delays runnable work.
      r.phase = RequestPhase::kPreparing;
      ++num_preparing_;
      preparing_[r.model.value()].emplace_back(r.slot, r.id);
      residency_.WantLoad(r.model);
      continue;
    }
    ++num_waiting_;
    policy_->OnArrival(r.View(), now);
  }
  for (RequestId id : cancels_) {
    if (RequestRecord* r = Find(id)) {
      Terminate(*r, RequestPhase::kCancelled, FinishReason::kNone,
                absl::StrCat("cancelled by the host while ", std::string(PhaseName(r->phase))),
                now);
    }
  }
}

void Scheduler::Impl::PromotePrepared(absl::Time now) {
  for (ModelId m : loaded_) {
    for (const auto& [slot, id] : preparing_[m.value()]) {
      RequestRecord& r = slab_[slot];
      if (r.id != id || r.phase != RequestPhase::kPreparing) continue;  // Ended meanwhile.
      r.phase = RequestPhase::kWaiting;
      --num_preparing_;
      ++num_waiting_;
      policy_->OnArrival(r.View(), now);
    }
    preparing_[m.value()].clear();
  }
  loaded_.clear();
}

void Scheduler::Impl::DemoteUnloaded(absl::Time now) {
  if (demoted_.empty()) return;
  // Rare (a model unloaded while requests for it still wait): a scan of the
  // live requests is simpler than keeping per-model waiting lists. The slab,
  // not the id map, so the order is deterministic; sorted so that preparing_
  // stays in arrival order.
  std::vector<RequestRecord*> moved;
  for (RequestRecord& r : slab_) {
    if (r.id.valid() && r.phase == RequestPhase::kWaiting &&
        std::find(demoted_.begin(), demoted_.end(), r.model) != demoted_.end()) {
      moved.push_back(&r);
    }
  }
  std::sort(moved.begin(), moved.end(), [](const RequestRecord* a, const RequestRecord* b) {
    return a->arrival_seq < b->arrival_seq;
  });
  for (RequestRecord* record : moved) {
    RequestRecord& r = *record;
    policy_->OnRemoved(r.View(), now);
    r.phase = RequestPhase::kPreparing;
    --num_waiting_;
    ++num_preparing_;
    preparing_[r.model.value()].emplace_back(r.slot, r.id);
  }
  demoted_.clear();
}

void Scheduler::Impl::ExpireDeadlines(absl::Time now) {
  while (!deadlines_.empty() && deadlines_.front().first <= now) {
    std::pop_heap(deadlines_.begin(), deadlines_.end(), LaterDeadline());
    const auto [deadline, id] = deadlines_.back();
    deadlines_.pop_back();
    RequestRecord* r = Find(id);
    if (r == nullptr) continue;  // Already ended.
    if (r->deadline == deadline) {
      Terminate(*r, RequestPhase::kTimedOut, FinishReason::kNone,
                absl::StrCat("deadline ", absl::FormatTime(deadline),
                             " passed while ", std::string(PhaseName(r->phase)), " with ",
                             r->output_tokens, " tokens generated"),
                now);
    } else if (r->queue_deadline == deadline && r->first_admit_time == absl::InfiniteFuture()) {
      const WorkClassConfig& c = options_.work_classes[r->work_class.value()];
      Terminate(*r, RequestPhase::kTimedOut, FinishReason::kNone,
                absl::StrCat("waited ", absl::FormatDuration(now - r->arrival_time),
                             " without being admitted; class \"", c.name, "\" has a queue timeout of ",
                             absl::FormatDuration(c.queue_timeout)),
                now);
    }
  }
}

bool Scheduler::Impl::CanBeVictim(const RequestRecord& r) const {
  // A request admitted or swapped in during this step may have copies queued
  // in the plan; it is left alone until the next step.
  return r.phase == RequestPhase::kRunning && r.admitted_step != plan_.step;
}

RequestRecord* Scheduler::Impl::PickVictim(const RequestRecord& beneficiary,
                                           bool beneficiary_running) {
  RequestRecord* v = Find(policy_->PickVictim(beneficiary.id, beneficiary_running));
  if (v == nullptr || v == &beneficiary || !CanBeVictim(*v)) return nullptr;
  return v;
}

void Scheduler::Impl::ScheduleRunning(RunList which, absl::Time now) {
  const std::vector<uint32_t>& list = which == RunList::kDecoding ? decoding_ : prefilling_;
  // Preemptions reorder the list (swap-removal), so walk a copy and skip
  // entries that left the list or were already scheduled.
  snapshot_.assign(list.begin(), list.end());
  for (size_t i = 0; i < snapshot_.size(); ++i) {
    if (budget_ <= 0) break;
    // Running records sit wherever their requests arrived in the slab; under
    // policies that rotate the running set they are scattered, and the loop
    // waits on memory: fetch a few records ahead.
    if (i + kRecordPrefetch < snapshot_.size()) {
      PrefetchRecord(slab_[snapshot_[i + kRecordPrefetch]], 2);
    }
    RequestRecord& r = slab_[snapshot_[i]];
    if (r.list != which || ScheduledNow(r)) continue;
    const int32_t want = which == RunList::kDecoding
                             ? 1
                             : std::min({r.length() - r.computed, chunk_cap_, budget_});
    // Most decode steps fit the last block: skip the growth path entirely.
    const int32_t capacity = static_cast<int32_t>(r.device_blocks.size()) * block_size_;
    const int32_t got = r.computed + want <= capacity
                            ? r.computed + want
                            : GrowTo(r, r.computed + want, r.computed + 1, now);
    if (got <= r.computed) continue;
    ScheduleSequence(r, got - r.computed);
  }
}

int32_t Scheduler::Impl::GrowTo(RequestRecord& r, int32_t want, int32_t min,
                                absl::Time now) {
  const uint32_t cls = r.work_class.value();
  const WorkClassConfig& c = options_.work_classes[cls];
  if (!c.borrow && c.kv_block_budget > 0) {
    // A hard budget: grow only within it, else yield to the class's others.
    const int32_t room = c.kv_block_budget - class_blocks_[cls];
    const int32_t held = static_cast<int32_t>(r.device_blocks.size());
    if (BlocksFor(min) - held > room) {
      Preempt(r, now);
      return -1;
    }
    want = std::min(want, (held + room) * block_size_);
  }
  while (true) {
    const int32_t held = static_cast<int32_t>(r.device_blocks.size());
    const int32_t need_want = BlocksFor(want) - held;
    const int32_t need_min = BlocksFor(min) - held;
    if (need_min > Allocatable() && need_min <= allocator_.num_allocatable()) {
      // Unload models nobody is running before preempting anyone.
      MakeRoomInMemory(need_min, r.model);
    }
    const int32_t free = Allocatable();
    if (need_want <= free || need_min <= free) {
      const int32_t take = std::max(0, std::min(need_want, free));
      for (int32_t i = 0; i < take; ++i) AddBlock(r, *allocator_.Allocate());
      if (take > 0 && ClassOver(cls)) MarkBorrowed(r);
      return std::min(want, static_cast<int32_t>(r.device_blocks.size()) * block_size_);
    }
    // Borrowed capacity is reclaimed before the policy is asked, but only
    // for growth within the class's entitlement: two classes that each need
    // more than their budget would otherwise take turns reclaiming from each
    // other forever.
    const bool entitled =
        (c.kv_block_budget == 0 || class_blocks_[cls] + need_min <= c.kv_block_budget) &&
        (c.max_running == 0 || class_running_[cls] <= c.max_running);
    RequestRecord* victim = entitled ? PickBorrowedVictim(r) : nullptr;
    if (victim == nullptr) victim = PickVictim(r, /*beneficiary_running=*/true);
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

void Scheduler::Impl::ScheduleSequence(RequestRecord& r, int32_t num_tokens) {
  // Everything this step allocates for `r` happened before this call, and
  // its block table never reallocates (reserved at arrival), so the spans
  // can be filled in now, in the same pass that touches the record.
  const bool decode = r.decoding() && num_tokens == 1;
  r.plan_index = static_cast<int32_t>(plan_.sequences.size());
  r.scheduled_step = plan_.step;
  ScheduledSequence& s = plan_.sequences.emplace_back();
  s.id = r.id;
  s.model = r.model;
  s.start_position = r.computed;
  s.num_tokens = num_tokens;
  s.sample = r.computed + num_tokens == r.length();
  s.decode = decode;
  const absl::Span<const BlockId> table(r.device_blocks);
  s.block_table = table;
  s.full_block_table = r.needs_full_table;
  // Spans built from pointers: the bounds hold by construction (blocks_sent
  // <= table size, and tokens cover every position), so skip subspan's checks.
  s.new_blocks = r.needs_full_table
                     ? table
                     : absl::Span<const BlockId>(table.data() + r.blocks_sent,
                                                 table.size() - static_cast<size_t>(r.blocks_sent));
  if (r.has_token_ids) {
    s.token_ids = absl::Span<const TokenId>(r.tokens.data() + r.computed,
                                            static_cast<size_t>(num_tokens));
  }
  r.blocks_sent = static_cast<int32_t>(table.size());
  r.needs_full_table = false;
  r.engine_has_state = true;
  plan_slots_.push_back(r.slot);
  budget_ -= num_tokens;
  plan_.num_batched_tokens += num_tokens;
  plan_.num_decodes += decode ? 1 : 0;
}

void Scheduler::Impl::Unschedule(RequestRecord& r) {
  const auto index = static_cast<size_t>(r.plan_index);
  const ScheduledSequence& s = plan_.sequences[index];
  budget_ += s.num_tokens;
  plan_.num_batched_tokens -= s.num_tokens;
  if (s.decode) --plan_.num_decodes;
  RemovePlanEntry(index);
  r.plan_index = -1;
  r.scheduled_step = 0;
}

void Scheduler::Impl::EndPlanSegment() {
  plan_segment_end_[plan_segment_++] = plan_.sequences.size();
}

void Scheduler::Impl::RemovePlanEntry(size_t index) {
  // O(1) and order-keeping where the plan promises order: each closed
  // segment from the hole's own onward hands its last entry to the slot
  // vacated before it, so decodes, continuing prefills and admissions stay
  // contiguous and in that order (within a segment nothing is promised).
  // Compacting instead cost a pass over the plan in every step with a
  // preemption.
  size_t hole = index;
  for (int s = 0; s < plan_segment_; ++s) {
    if (plan_segment_end_[s] <= hole) continue;
    const size_t last = --plan_segment_end_[s];
    MovePlanEntry(last, hole);
    hole = last;
  }
  MovePlanEntry(plan_.sequences.size() - 1, hole);
  plan_.sequences.pop_back();
  plan_slots_.pop_back();
}

void Scheduler::Impl::MovePlanEntry(size_t from, size_t to) {
  if (from == to) return;
  plan_.sequences[to] = plan_.sequences[from];
  plan_slots_[to] = plan_slots_[from];
  slab_[plan_slots_[to]].plan_index = static_cast<int32_t>(to);
}

void Scheduler::Impl::Preempt(RequestRecord& r, absl::Time now) {
  if (ScheduledNow(r)) Unschedule(r);
  RemoveFromList(r);
  // Blocks past the computed prefix hold no KV yet: never worth copying.
  const auto valid = static_cast<size_t>(BlocksFor(r.computed));
  ReleaseDeviceBlocks(r, valid);
  PreemptionMode mode = PreemptionMode::kRecompute;
  if (options_.preemption_mode == PreemptionMode::kSwap && valid > 0 &&
      static_cast<size_t>(allocator_.num_free_host()) >= valid) {
    mode = PreemptionMode::kSwap;
    for (BlockId device : r.device_blocks) {
      const BlockId host = *allocator_.AllocateHost();
      plan_.swap_out.push_back({r.id, device, host});
      r.host_blocks.push_back(host);
    }
    r.phase = RequestPhase::kSwapped;
    ++num_swapped_;
    residency_.AddActive(r.model, 1);
  } else {
    r.computed = 0;
    r.phase = RequestPhase::kWaiting;
    ++num_waiting_;
  }
  if (DropDeviceState(r)) plan_.preempted.push_back({r.id, mode});
  ++r.preemptions;
  r.preempted_step = plan_.step;
  ++counters_.preemptions;
  policy_->OnPreempted(r.View(), now);
  if (sink_ != nullptr) {
    RequestEvent e = EventFor(RequestEventKind::kPreempt, r, now);
    e.preemption_mode = mode;
    sink_->OnRequestEvent(e);
  }
}

void Scheduler::Impl::AdmitWaiting(absl::Time now) {
  if (num_waiting_ + num_swapped_ == 0 || budget_ <= 0) return;
  policy_->BeginAdmission(now);
  int32_t declines = 0;
  while (budget_ > 0) {
    const RequestId id = policy_->NextAdmission();
    if (!id.valid()) break;
    RequestRecord* r = Find(id);
    Admission result = Admission::kDeclined;
    if (r != nullptr && r->preempted_step != plan_.step &&
        (r->phase == RequestPhase::kWaiting || r->phase == RequestPhase::kSwapped)) {
      result = TryAdmit(*r, now);
    }
    if (result == Admission::kAdmitted) continue;
    if (result == Admission::kDeclined) {
      // Particular to this candidate (its class is at a hard limit or may only
      // borrow idle capacity; it was preempted this very step; or, a policy
      // bug, it is not waiting): offer the next one, boundedly.
      if (++declines > options_.max_admission_declines) break;
      policy_->Decline(id);
      continue;
    }
    // No room for a candidate within its entitlement: reclaim borrowed
    // capacity first, then ask the policy.
    RequestRecord* victim = PickBorrowedVictim(*r);
    if (victim == nullptr) victim = PickVictim(*r, /*beneficiary_running=*/false);
    if (victim == nullptr) break;  // Head of line waits for room.
    Preempt(*victim, now);
  }
  policy_->EndAdmission();
}

bool Scheduler::Impl::HasRoom(int32_t blocks, ModelId model) {
  // The watermark keeps headroom for running sequences to grow; with nothing
  // running there is nobody to protect, and insisting on it could block a
  // large request forever.
  const int32_t reserve = running_count() > 0 ? options_.kv.watermark_blocks : 0;
  if (Allocatable() - blocks >= reserve) return true;
  // Idle models' weights may be holding the memory; runnable work wins.
  if (allocator_.num_allocatable() - blocks >= reserve && MakeRoomInMemory(blocks + reserve, model)) {
    return Allocatable() - blocks >= reserve;
  }
  return false;
}

bool Scheduler::Impl::MakeRoomInMemory(int32_t blocks, ModelId keep) {
  if (!residency_.enabled()) return false;
  if (residency_.MakeRoomForBlocks(blocks, allocator_.num_owned(), keep, &plan_.model_commands,
                                   &demoted_)) {
    return true;
  }
  // Swapped requests pin their model (their KV would need it back). When
  // even unloading every other unpinned model is not enough, they give up
  // their host copies and recompute later, so their models can go: without
  // this, a request could wait forever behind one whose model it evicts.
  bool unpinned = false;
  // The slab, not the id map: its order is deterministic.
  for (RequestRecord& r : slab_) {
    if (!r.id.valid() || r.phase != RequestPhase::kSwapped || r.model == keep) continue;
    for (BlockId host : r.host_blocks) host_release_after_step_.push_back(host);
    r.host_blocks.clear();
    r.computed = 0;
    r.phase = RequestPhase::kWaiting;
    --num_swapped_;
    ++num_waiting_;
    residency_.AddActive(r.model, -1);
    unpinned = true;
  }
  return unpinned && residency_.MakeRoomForBlocks(blocks, allocator_.num_owned(), keep,
                                                  &plan_.model_commands, &demoted_);
}

int32_t Scheduler::Impl::CountPrefixHits(RequestRecord& r) {
  hit_blocks_.clear();
  if (!prefix_cache_.has_value() || !r.has_token_ids || r.computed != 0) return 0;
  // Hashes of generated tokens' full blocks are computed lazily, so a request
  // recomputed after preemption also finds its own released blocks.
  const auto full = static_cast<size_t>(r.length() / block_size_);
  HashFullBlocks(r, full);
  for (size_t b = 0; b < full; ++b) {
    const BlockId block = prefix_cache_->Find(r.block_hashes[b]);
    if (!block.valid()) break;
    hit_blocks_.push_back(block);
  }
  return static_cast<int32_t>(hit_blocks_.size());
}

void Scheduler::Impl::HashFullBlocks(RequestRecord& r, size_t blocks) {
  while (r.block_hashes.size() < blocks) {
    const size_t b = r.block_hashes.size();
    const uint64_t parent = b == 0 ? PrefixCache::RootHash(r.model) : r.block_hashes[b - 1];
    r.block_hashes.push_back(PrefixCache::HashBlock(
        parent, absl::Span<const TokenId>(r.tokens).subspan(b * block_size_, block_size_)));
  }
}

Scheduler::Impl::Admission Scheduler::Impl::TryAdmit(RequestRecord& r, absl::Time now) {
  // Its model was unloaded this step to make room; it goes back to preparing.
  if (!residency_.ready(r.model)) return Admission::kDeclined;
  const bool swapped = r.phase == RequestPhase::kSwapped;
  int32_t hits = 0;
  int32_t start = r.computed;
  bool copy_last_hit = false;
  if (!swapped) {
    hits = CountPrefixHits(r);
    start = hits * block_size_;
    if (start >= r.length()) {
      // The whole sequence is cached, but the last position must run to
      // produce logits: it is rewritten in a private copy of the last block.
      start = r.length() - 1;
      copy_last_hit = true;
    }
  }
  const int32_t n = std::min({r.length() - start, chunk_cap_, budget_});
  const int32_t held = swapped ? static_cast<int32_t>(r.host_blocks.size()) : hits;
  const int32_t total = std::max(held, BlocksFor(start + n));
  int32_t needed = total - (swapped ? 0 : hits) + (copy_last_hit ? 1 : 0);
  for (int32_t b = 0; b < hits; ++b) {
    // A cached, unreferenced hit leaves the allocatable pool when reused.
    if (allocator_.state(hit_blocks_[b]) == BlockState::kCached) ++needed;
  }
  // Class limits: within them the request is entitled to room (and may
  // cause preemption); beyond them it only borrows what is idle.
  const uint32_t cls = r.work_class.value();
  const WorkClassConfig& c = options_.work_classes[cls];
  // Copy-on-write replaces the last hit, so the table ends with `total`.
  const bool beyond = (c.max_running > 0 && class_running_[cls] + 1 > c.max_running) ||
                      (c.kv_block_budget > 0 && class_blocks_[cls] + total > c.kv_block_budget);
  if (beyond && !c.borrow) return Admission::kDeclined;
  // A hard budget is kept by reserving each sequence's largest size: growth
  // then never needs the class's own sequences to preempt each other (which
  // the randomized driver showed can livelock).
  const int32_t reserve_max =
      !c.borrow && c.kv_block_budget > 0 ? BlocksFor(r.prompt_tokens + r.max_new_tokens) : 0;
  if (reserve_max > 0 && class_reserved_[cls] + reserve_max > c.kv_block_budget) {
    return Admission::kDeclined;
  }
  // Room for the whole remaining prefill, beside what earlier admitted
  // prefills still need, not just for this chunk: long prompts admitted
  // together on first-chunk room alone overcommit the cache and preempt each
  // other round after round, losing all progress (the simulator's flood).
  const int32_t rest_of_prefill = r.decoding() ? 0 : std::max(0, BlocksFor(r.length()) - total);
  if (running_count() >= options_.max_running ||
      !HasRoom(needed + rest_of_prefill + prefill_reserved_, r.model)) {
    return beyond ? Admission::kDeclined : Admission::kNoRoom;
  }

  if (swapped) {
    for (BlockId host : r.host_blocks) {
      const BlockId device = *allocator_.Allocate();
      plan_.swap_in.push_back({r.id, host, device});
      AddBlock(r, device);
      host_release_after_step_.push_back(host);
    }
    r.host_blocks.clear();
    --num_swapped_;
    residency_.AddActive(r.model, -1);
  } else {
    for (int32_t b = 0; b < hits; ++b) {
      (void)allocator_.AddRef(hit_blocks_[b]);
      AddBlock(r, hit_blocks_[b]);
    }
    if (copy_last_hit) {
      const CopyOnWrite cow = *allocator_.PrepareWrite(r.device_blocks.back());
      if (cow.copy_from.valid()) {
        plan_.copy_on_write.push_back({r.id, cow.copy_from, cow.block});
        r.device_blocks.back() = cow.block;
      }
    }
    r.computed = start;
    r.registered_blocks = hits;
    r.cached_prompt_tokens = std::min(start, r.prompt_tokens);
    counters_.prefix_hit_tokens += static_cast<uint64_t>(start);
    --num_waiting_;
  }
  while (static_cast<int32_t>(r.device_blocks.size()) < total) {
    AddBlock(r, *allocator_.Allocate());
  }
  r.phase = RequestPhase::kRunning;
  r.admitted_step = plan_.step;
  r.needs_full_table = true;
  r.blocks_sent = 0;
  if (r.first_admit_time == absl::InfiniteFuture()) r.first_admit_time = now;
  AddToList(r, r.decoding() ? RunList::kDecoding : RunList::kPrefilling);
  if (r.list == RunList::kPrefilling) {
    r.prefill_reserve = std::max(0, BlocksFor(r.length()) - static_cast<int32_t>(r.device_blocks.size()));
    prefill_reserved_ += r.prefill_reserve;
  }
  r.reserved_blocks = reserve_max;
  class_reserved_[cls] += reserve_max;
  if (beyond) MarkBorrowed(r);
  policy_->OnAdmitted(r.View(), now);
  Emit(RequestEventKind::kAdmit, r, now);
  ScheduleSequence(r, n);
  return Admission::kAdmitted;
}

void Scheduler::Impl::FinalizePlan() {
  plan_.released.swap(to_release_);
  to_release_.clear();
  for (RequestId id : pending_drops_) plan_.preempted.push_back({id, PreemptionMode::kRecompute});
  pending_drops_.clear();
}

}  // namespace hearth

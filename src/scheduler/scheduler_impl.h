// File: src/scheduler/scheduler_impl.h
//
// The scheduler's engine-side state and the step planner, split by job:
//   scheduler.cc             construction, the facade, lookups, stats
//   scheduler_intake.cc      inbox drain, records, workflows, deadlines
//   scheduler_lifecycle.cc   the one place a request changes phase
//                            (SetPhase); preempt, retry-or-fail, terminate
//   scheduler_residency.cc   model preparation, loads, room from idle models
//   scheduler_plan.cc        Plan: running sequences, growth, plan entries
//   scheduler_admission.cc   admission, victims
//   scheduler_overlap.cc     planning ahead of the step in flight
//   scheduler_changes.cc     live changes (SetPriority, SetWorkClass)
//   scheduler_complete.cc    Complete: validate the outcome, then apply it
//   scheduler_invariants.cc  CheckInvariants
//
// Who decides what: the Policy chooses every order (next admission and each
// kind of victim); ClassCapacity holds the class limits and their one
// predicate; KvCacheManager says what admitting or growing a sequence takes
// in blocks and takes them; this type validates each policy choice against
// the budgets and applies it.
//
// Live requests sit in the RequestTable, a slab of RequestRecords addressed
// by slot; running ones are in its two run lists (decoding, prefilling) with
// O(1) swap-removal. Every buffer a step touches is reserved up front, so a
// steady-state step allocates nothing.

#ifndef HEARTH_SCHEDULER_SCHEDULER_IMPL_H_
#define HEARTH_SCHEDULER_SCHEDULER_IMPL_H_

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kv/block_allocator.h"
#include "hearth/metrics/metrics_sink.h"
#include "hearth/policy/policy.h"
#include "hearth/scheduler/scheduler.h"
#include "kv/kv_cache_manager.h"
#include "residency/model_residency.h"
#include "scheduler/class_capacity.h"
#include "scheduler/deadline_heap.h"
#include "scheduler/encoder_planner.h"
#include "scheduler/inbox.h"
#include "scheduler/model_registry.h"
#include "scheduler/published_value.h"
#include "scheduler/request_record.h"
#include "scheduler/request_table.h"
#include "scheduler/scheduler_state.h"
#include "scheduler/step_budget.h"
#include "scheduler/victim_pricing.h"
#include "scheduler/workflow_table.h"

namespace hearth {

class Scheduler::Impl {
 public:
  Impl(SchedulerOptions options, BlockAllocator allocator,
       std::unique_ptr<Policy> policy);

  // Thread-safe.
  absl::StatusOr<RequestId> Submit(const RequestSpec& spec);
  absl::Status Cancel(RequestId id, std::string_view reason) {
    return inbox_.Cancel(id, reason);
  }
  absl::Status Release(RequestId id) { return inbox_.Release(id); }
  absl::Status SetPriority(RequestId id, int32_t priority);
  absl::Status SetWorkClass(RequestId id, WorkClassId work_class);
  void Wake() { inbox_.Wake(); }
  absl::StatusOr<ModelId> AddModel(ModelConfig config);
  absl::Status RemoveModel(ModelId model);
  const internal::ModelRegistry& models() const { return models_; }
  size_t DrainResults(std::vector<RequestResult>* out) {
    return inbox_.DrainResults(out);
  }
  const SchedulerOptions& options() const { return options_; }

  // Engine thread.
  absl::StatusOr<const StepPlan*> Plan(absl::Time now);
  absl::Status Complete(const StepOutcome& outcome);
  // Complete() of the plan `step_.plan` points at.
  absl::Status CompleteSelected(const StepOutcome& outcome);
  bool plan_outstanding() const { return step_.outstanding > 0; }
  int plans_outstanding() const { return step_.outstanding; }
  absl::StatusOr<RequestView> GetRequest(RequestId id) const;
  SchedulerStats stats() const;
  // Copies stats() where PublishedStats() reads it.
  void PublishStats() { stats_.published.Store(stats()); }
  SchedulerStats PublishedStats() const { return stats_.published.Load(); }
  absl::Time NextEventTime() const;
  bool WaitForWork(absl::Duration timeout);
  absl::Status CheckInvariants() const;
  const BlockAllocator& allocator() const { return kv_.allocator(); }
  std::string_view policy_name() const { return policy_->name(); }

  // Gives the inbox the requests ended by this Plan/Complete, in one batch.
  void HandOverEnded();

 private:
  using Record = internal::RequestRecord;
  using Projection = internal::Projection;
  using Admission = internal::Admission;
  using AdmissionNeed = internal::AdmissionNeed;

  // --- Intake (scheduler_intake.cc).
  void DrainInbox(absl::Time now);
  // Grows the per-model state (residency, preparation queues, plan limits)
  // to the models added since the last call, and tells residency of those
  // removed (scheduler_models.cc). O(1) when nothing changed.
  void SyncModels();
  void Intake(internal::Submission& submission, absl::Time now);
  // A request arriving, or released from its hold: to its model's
  // preparation, or to waiting (the policy hears of it).
  void MakeRunnable(Record& r, absl::Time now);
  // Parallel sampling: lets the samples of intake_.group_releases' groups
  // that still wait for sample 0 run.
  void ReleaseGroups(absl::Time now);
  // --- Live changes (scheduler_changes.cc).
  void ApplyChange(const internal::RequestChange& change, absl::Time now);
  // The priority and class parts of `change`.
  void ApplyLiveChange(Record& r, const internal::RequestChange& change, absl::Time now);
  // Moves `r`'s class accounting (running count, blocks, reservation,
  // borrowing) and class-derived targets to `to`.
  void MoveToClass(Record& r, WorkClassId to, absl::Time now);
  // Class-derived fields of `r` for its current class: SLO targets not set
  // by the request, and the queue deadline.
  void ResolveClassTargets(Record& r);
  // A record for a new submission, in phase kQueued: the hot fields (what
  // every step reads), then the cold ones.
  Record& CreateRecord(internal::Submission& submission, absl::Time now);
  uint32_t TakeSlot();
  void InitColdFields(Record& record, internal::Submission& submission, absl::Time now);
  // Empty, or why a stamped arrival time is refused at intake.
  std::string CheckArrivalStamp(const RequestSpec& spec, absl::Time now) const;
  // Sets the new record's workflow from its parent (live or remembered);
  // returns why the call cannot join it (another user's), or "" when fine.
  std::string JoinWorkflow(Record& record);
  // Ends `id` at `t` (InfiniteFuture: never) unless it has ended or its
  // deadlines have moved by then (ExpireOne).
  void WatchDeadline(absl::Time t, RequestId id);
  void ExpireDeadlines(absl::Time now);
  void ExpireOne(Record& record, absl::Time deadline, absl::Time now);
  // Requests whose model became ready (in `model_queues_.loaded`) join the waiting set.
  void PromotePrepared(absl::Time now);
  // Waiting requests of models unloaded this step (`model_queues_.demoted`) go back to
  // preparing.
  void DemoteUnloaded(absl::Time now);
  // Applies the outcome of the plan's model loads.
  void FinishModelLoads(const StepOutcome& outcome, absl::Time now);

  // --- Lifecycle (scheduler_lifecycle.cc): every phase change goes through
  // SetPhase, which keeps the phase counts and model residency, and tells
  // the policy what the change means to it.
  void SetPhase(Record& record, RequestPhase to, absl::Time now);
  void TellPolicy(const Record& record, RequestPhase from, RequestPhase to, absl::Time now);
  // Running-list membership, with the class counts that go with it.
  void StartRunning(Record& record);
  void StopRunning(Record& record);
  // Prefill finished: same running sequence, other list.
  void MoveToDecoding(Record& record);
  // Preempts a running request (swapped out when KvCacheManager::SwapsOut
  // says it pays, else recomputed later) and tells the policy.
  void Preempt(Record& record, absl::Time now);
  // An engine-reported failure: retry per the class policy or fail.
  void RetryOrFail(Record& record, const std::string& error, absl::Time now);
  // The engine had no KV for `record` this step: recompute preemption,
  // listed in the next plan; past max_out_of_kv_reports without a token, a
  // failure instead.
  void PreemptOutOfKv(Record& record, absl::Time now);
  // Stops a running request whose engine state the next plan drops (retry,
  // out of KV): waits again with its progress reset.
  void RequeueForRecompute(Record& record, PreemptionCause cause, absl::Time now);
  // Ends a live request: frees what it holds, tells policy, sink and host.
  void Terminate(Record& record, RequestPhase phase, FinishReason reason,
                 std::string message, absl::Time now);
  void DeliverResult(Record& record, RequestPhase phase, FinishReason reason,
                     std::string message, absl::Time now);
  // Releases the table's blocks past `keep` and the class's count of them.
  void ReleaseBlocks(Record& record, size_t keep) {
    kv_.ReleaseTail(record.kv, record.work_class.value(), keep);
  }
  // Releases all of record's device blocks and forgets what the engine was
  // sent; true when the engine held state for it (the caller lists the drop).
  bool DropDeviceState(Record& record);
  RequestEvent EventFor(RequestEventKind kind, const Record& record, absl::Time now) const;
  void Emit(RequestEventKind kind, const Record& record, absl::Time now);
  RequestView ViewOf(const Record& record) const {
    return record.View(record.kv.num_blocks());
  }

  // --- Plan (scheduler_plan.cc).
  void StartPlan(absl::Time now);
  void ScheduleRunning(internal::RunList which, absl::Time now);
  // Its loop over the snapshot; kAhead: a plan is in flight.
  template <bool kAhead>
  void WalkRunning(internal::RunList which, absl::Time now);
  // Gives running `record` blocks for up to `want` positions (more than it
  // holds: ScheduleRunning takes the fast path itself), settling for
  // fewer (but at least `min`) rather than preempting anyone; preempts
  // policy-chosen victims only when not even `min` fits. Returns the
  // positions it can now hold, or -1 when `record` had to preempt itself.
  int32_t GrowTo(Record& record, int32_t want, int32_t min, absl::Time now);
  // Growth of a class with a hard budget stops at the budget; returns the
  // capped `want`, or -1 when even `min` does not fit and `record` yielded.
  int32_t CapToHardBudget(Record& record, int32_t want, int32_t min, absl::Time now);
  // Schedules `num_tokens` positions of `record` from where it stands.
  void ScheduleSequence(Record& record, int32_t num_tokens);
  // The same from `at` (projected past the step in flight).
  void ScheduleProjected(Record& record, const Projection& at, int32_t num_tokens);
  void EmitSequence(Record& record, const Projection& at, int32_t num_tokens);
  // Multimodal prompts: a prefill chunk of `record` from `computed` cut to
  // its spans and this step's encoder (EncoderPlanner::CutChunk), `want`
  // positions asked; a chunk starting at a span may take the span whole
  // past `want` when the step has the tokens. 0: it waits this step (and,
  // waiting at a span, may become the planner's waiter).
  int32_t CutToSpans(const Record& record, int32_t computed, int32_t want);
  // Speculative decoding: gives the step's decodes their draft tokens from
  // the budget and memory left after everything else (see the .cc).
  void PlanDrafts();
  bool ScheduledNow(const Record& record) const {
    return step_.planning && record.scheduled_step == step_.plan->step;
  }
  // --- Overlapped planning (scheduler_overlap.cc).
  // Plan() with a plan outstanding: builds into the other buffer and marks
  // the outstanding plan's sequences in flight.
  void BeginPlanAhead();
  // Index of `record`'s entry in the plan the engine is running while this
  // one is built, or -1 when it has none (or nothing is in flight).
  // Its index there is still `plan_index` until this plan schedules it.
  int32_t InFlightIndex(const Record& record) const {
    return record.scheduled_step == step_.in_flight_step ? record.plan_index : -1;
  }
  // Projects in-flight `record` (entry `index` of that plan); false when it
  // must not be planned ahead (drafts in flight, or that step's token ends
  // it by its limits).
  bool Project(const Record& record, int32_t index, Projection* out) const;
  // The token the step in flight samples for `record` is one more; false
  // when it reaches the request's limits (that step then ends it and
  // nothing follows). `at`: projected with that token.
  bool RoomAfterPending(const Record& record, const Projection& at) const {
    return record.output_tokens + 1 < record.max_new_tokens &&
           at.length < limits_.context_length[record.model.value()];
  }
  // In-flight prefills whose step samples their first token decode in this
  // plan, beside the decoding list.
  void ScheduleFirstDecodes(absl::Time now);
  // ScheduleRunning's projection of a record in the step in flight (in
  // list `which`); false when it is not planned in this step. A decode
  // without drafts advances by its one token, read off the record, which
  // every step has at hand; anything else by its entry there. A first token
  // to come is ScheduleFirstDecodes' to plan.
  bool ProjectAhead(const Record& record, internal::RunList which, Projection* at) const {
    if (which == internal::RunList::kDecoding && options_.max_draft_tokens == 0) {
      *at = {record.computed + 1, record.length() + 1, true};
      return RoomAfterPending(record, *at);
    }
    return Project(record, record.plan_index, at) &&
           !(which == internal::RunList::kPrefilling && at->input_pending);
  }
  // `record` leaves the running set while a plan holding it is outstanding
  // (not the one being built): that entry's outcome is to be ignored.
  void VoidOutstandingEntry(Record& record);
  // Voids `record`'s entry `index` in the other outstanding plan than
  // `step_.plan` (the one in flight while a plan is built; the newer one during
  // Complete of the older).
  void VoidOtherEntry(Record& record, int32_t index);
  // Voids `record`'s entry in the plan in flight, if it has one, once this
  // plan has scheduled it too (its plan_index names this plan's entry).
  void VoidInFlightOf(Record& record);
  // Reserves what the plan buffers fill each step (both with overlap).
  void ReservePlanBuffers(size_t running);
  // The buffer holding the other outstanding plan than `step_.plan`.
  int other_index() const { return step_.plan == &step_.buffers[0].plan ? 1 : 0; }
  internal::PlanBuffer& other_buffer() { return step_.buffers[other_index()]; }
  // Complete() of the older of two outstanding plans: points step_.plan at it
  // for the call, and back at the newer one when done.
  void SelectBuffer(int index) {
    step_.plan = &step_.buffers[index].plan;
    step_.slots = &step_.buffers[index].slots;
  }
  void Unschedule(Record& record);
  // The plan is built in segments (decodes, continuing prefills, then
  // admissions); EndPlanSegment closes the current one.
  void EndPlanSegment();
  // Removes plan entry `index`, keeping the segments contiguous and ordered.
  void RemovePlanEntry(size_t index);
  void MovePlanEntry(size_t from, size_t to);
  void FinalizePlan();

  // --- Admission and victims (scheduler_admission.cc).
  void AdmitWaiting(absl::Time now);
  // Tries the request waiting at a span (EncoderPlanner::waiter) before
  // the policy's candidates, when it is waiting.
  void AdmitSpanWaiter(absl::Time now);
  // Admits a waiting or swapped request with its first chunk if its class's
  // limits and memory allow (prefix hits reused, swap-ins copied back);
  // otherwise leaves it untouched.
  // `spare_blocks`: blocks the admission must leave free besides the
  // watermark (see AdmitWaiting's backfilling).
  Admission TryAdmit(Record& record, absl::Time now, int32_t spare_blocks);
  // A victim to make room for admitting `record`: borrowed capacity first,
  // then the policy's; null when there is none.
  Record* AdmissionVictim(Record& record);
  // `head` found no room and no victim: whether later candidates may be
  // admitted past it (the policy allows it and some could start), raising
  // `*spare_blocks` to twice the growth headroom and at least a block per
  // decoding sequence.
  bool StartsBackfill(const Record& head, absl::Time now, int32_t* spare_blocks);
  AdmissionNeed MeasureAdmission(Record& record);
  // Takes the blocks `need` describes and starts the request running.
  void CommitAdmission(Record& record, const AdmissionNeed& need, absl::Time now);
  // Whether `blocks` more can be taken while keeping the admission watermark,
  // unloading idle models if that makes the room.
  bool HasRoom(int32_t blocks, ModelId model);
  // With residency: unloads models (see ModelResidency::MakeRoomForBlocks) so
  // that `blocks` more KV blocks fit, keeping `keep`; as a last resort turns
  // swapped requests of other models into recompute. False if not enough.
  bool MakeRoomInMemory(int32_t blocks, ModelId keep);
  // Device blocks an allocation may take now: free or cached, and within
  // what resident weights leave for KV.
  int32_t Allocatable() const { return kv_.Allocatable(residency_.kv_block_limit()); }
  absl::Duration TpotStepAllowance(absl::Time done) const;
  bool CanBeVictim(const Record& record) const;
  // The victim the policy chooses among those it ranks below `beneficiary`
  // (Policy::ChooseVictim, priced by internal::VictimPricing; none
  // preempted max_preemptions_per_request times already); nullptr if none.
  Record* PickVictim(const Record& beneficiary, bool beneficiary_running, int32_t need_blocks);
  // The same for members' shares (VictimReason::kMemberShare; none
  // preempted kMaxShareReclaims times).
  Record* PickShareVictim(const Record& beneficiary, int32_t need_blocks);
  Record* ChosenVictim(const VictimRequest& request, int32_t max_preemptions);
  // Borrowed capacity the policy chooses to reclaim for `beneficiary` (a
  // request within its class's entitlement); nullptr if none.
  Record* PickReclaimVictim(const Record& beneficiary);
  // The sequence of `beneficiary`'s hard-budget class that yields; the
  // beneficiary itself unless the policy names a valid classmate.
  Record& PickClassLimitVictim(Record& beneficiary);

  // --- Complete (scheduler_complete.cc).
  absl::Status ValidateOutcome(const StepOutcome& outcome, absl::Time done) const;
  // StepOutcome::draft_ids past the sequences already applied; advanced
  // past this one's accepted drafts.
  void ApplySequenceOutcome(Record& record, const ScheduledSequence& s,
                            const SequenceOutcome& o, const int32_t* context_length,
                            const TokenId*& draft_ids, absl::Time done);
  // The outcome's draft ids: exactly the `accepted` its sequences report,
  // none negative, each in its sequence's model's vocabulary.
  absl::Status CheckDraftIds(const StepOutcome& outcome, size_t accepted) const;
  // Sequence `i`'s accepted drafts, at `at` in the outcome's draft_ids.
  absl::Status CheckDraftRange(const StepOutcome& outcome, size_t i, size_t at) const;
  // A decode that carried drafts, when its tokens reach a limit or carry
  // ids (ApplySequenceOutcome applies the rest): applies the accepted ones
  // and the token after them, and gives back the blocks of the rejected
  // ones (ReleaseRejectedDrafts).
  void ApplySpeculativeDecode(Record& record, const ScheduledSequence& s,
                              const SequenceOutcome& o, const TokenId* drafts,
                              int32_t context_length, absl::Time done);
  void ReleaseRejectedDrafts(Record& record);

  // --- Invariants (scheduler_invariants.cc).
  absl::Status CheckRecord(const Record& record, std::vector<int32_t>& refs,
                           std::vector<uint8_t>& host_used) const;
  absl::Status CheckPhase(const Record& record) const;
  absl::Status CheckClasses() const;
  absl::Status CheckCounts() const;
  absl::Status CheckBlocks(const std::vector<int32_t>& refs,
                           std::vector<uint8_t>& host_used) const;

  // --- Shared helpers.
  Record* Find(RequestId id) { return table_.Find(id); }
  const Record* Find(RequestId id) const { return table_.Find(id); }
  int32_t BlocksFor(int32_t positions) const { return kv_.BlocksFor(positions); }
  int32_t running_count() const { return table_.running_count(); }
  // Live requests preparing, waiting or swapped (running ones:
  // running_count()).
  int32_t count(RequestPhase phase) const { return table_.count(phase); }

  // How many records ahead the per-sequence loops prefetch, and how many of
  // the record's cache lines. Running records sit wherever their requests
  // arrived in the slab, so under policies that rotate the running set the
  // loops would otherwise wait on memory.
  static constexpr size_t kRecordPrefetch = 8;
  void Prefetch(uint32_t slot, int lines) const {
    const char* p = reinterpret_cast<const char*>(&table_[slot]);
    for (int l = 0; l < lines; ++l) __builtin_prefetch(p + 64 * l);
  }

  bool Background(const Record& record) const { return tokens_.Background(record.ttft_deadline); }
  // Frees an ended request's slot, or holds it while a plan naming it may
  // still be running (overlapped planning).
  void FreeSlot(uint32_t slot);

  const SchedulerOptions options_;
  // Grows on the engine thread only (SyncModels); host threads read
  // block_size alone.
  internal::PlanLimits limits_;
  internal::ModelRegistry models_;
  // Serialises AddModel and RemoveModel (validation against the models
  // registered, then the change).
  std::mutex model_writes_mu_;
  // Engine thread: the registry version SyncModels last saw, and which
  // models it has seen removed.
  uint64_t models_version_seen_ = 0;
  std::vector<bool> models_removed_seen_;
  internal::Inbox inbox_;
  internal::KvCacheManager kv_;
  internal::ClassCapacity capacity_;
  internal::TokenBudget tokens_;
  internal::EncoderPlanner encoder_;
  std::unique_ptr<Policy> policy_;
  MetricsSink* sink_;
  internal::ModelResidency residency_;
  internal::ModelQueues model_queues_;
  // The live requests: records by slot and id, phase counts, run lists.
  internal::RequestTable table_;
  internal::IntakeState intake_;
  internal::PlanState step_;
  internal::StepOutputs outputs_;
  internal::StatsState stats_;
};

}  // namespace hearth

#endif  // HEARTH_SCHEDULER_SCHEDULER_IMPL_H_

// File: src/scheduler/scheduler_impl.h
//
// The scheduler's engine-side state and the step planner. Split over
// scheduler.cc (construction, Submit/Cancel, lookups), scheduler_plan.cc
// (Plan and its phases), scheduler_complete.cc (Complete) and
// scheduler_invariants.cc (CheckInvariants).
//
// Data layout: live requests sit in a slab of RequestRecords addressed by
// slot; running ones are in two unordered lists (decoding, prefilling) with
// O(1) swap-removal. Ordering decisions belong to the Policy. Every buffer a
// step touches is reserved up front, so a steady-state step allocates nothing.

#ifndef HEARTH_SCHEDULER_SCHEDULER_IMPL_H_
#define HEARTH_SCHEDULER_SCHEDULER_IMPL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/kv/block_allocator.h"
#include "hearth/kv/prefix_cache.h"
#include "hearth/metrics/metrics_sink.h"
#include "hearth/policy/policy.h"
#include "hearth/scheduler/scheduler.h"
#include "scheduler/inbox.h"
#include "residency/model_residency.h"
#include "scheduler/request_record.h"
#include "scheduler/workflow_table.h"

namespace hearth {

class Scheduler::Impl {
 public:
  Impl(SchedulerOptions options, BlockAllocator allocator,
       std::unique_ptr<Policy> policy);

  // Thread-safe.
  absl::StatusOr<RequestId> Submit(const RequestSpec& spec);
  absl::Status Cancel(RequestId id) { return inbox_.Cancel(id); }
  size_t DrainResults(std::vector<RequestResult>* out) {
    return inbox_.DrainResults(out);
  }
  const SchedulerOptions& options() const { return options_; }

  // Engine thread.
  absl::StatusOr<const StepPlan*> Plan(absl::Time now);
  absl::Status Complete(const StepOutcome& outcome);
  bool plan_outstanding() const { return plan_outstanding_; }
  absl::StatusOr<RequestView> GetRequest(RequestId id) const;
  SchedulerStats stats() const;
  absl::Status CheckInvariants() const;
  const BlockAllocator& allocator() const { return allocator_; }
  std::string_view policy_name() const { return policy_->name(); }

 private:
  using Record = internal::RequestRecord;

  // --- Plan phases (scheduler_plan.cc).
  void DrainInbox(absl::Time now);
  void ExpireDeadlines(absl::Time now);
  void ScheduleRunning(internal::RunList which, absl::Time now);
  void AdmitWaiting(absl::Time now);
  void FinalizePlan();
  // Requests whose model became ready (in `loaded_`) join the waiting set.
  void PromotePrepared(absl::Time now);
  // Device blocks an allocation may take now: free or cached, and within
  // what resident weights leave for KV.
  int32_t Allocatable() const {
    return std::max(0, std::min(allocator_.num_allocatable(),
                                residency_.kv_block_limit() - allocator_.num_owned()));
  }

  // Gives running `record` blocks for up to `want` positions (more than it
  // holds: ScheduleRunning takes the fast path itself), settling for
  // fewer (but at least `min`) rather than preempting anyone; preempts
  // policy-chosen victims only when not even `min` fits. Returns the
  // positions it can now hold, or -1 when `record` had to preempt itself.
  int32_t GrowTo(Record& record, int32_t want, int32_t min, absl::Time now);
  enum class Admission {
    kAdmitted,
    // Not now, for a reason particular to this request (its class's limits).
    kDeclined,
    // No sequence slot or memory, though the request is entitled to them.
    kNoRoom,
  };
  // Admits a waiting or swapped request with its first chunk if its class's
  // limits and memory allow (prefix hits reused, swap-ins copied back);
  // otherwise leaves it untouched.
  Admission TryAdmit(Record& record, absl::Time now);
  // Leading full blocks of a waiting request found in the prefix cache; the
  // blocks themselves are left in hit_blocks_.
  int32_t CountPrefixHits(Record& record);
  // Extends record.block_hashes (chained) to its first `blocks` full blocks.
  void HashFullBlocks(Record& record, size_t blocks);
  // Whether `blocks` more can be taken while keeping the admission watermark,
  // unloading idle models if that makes the room.
  bool HasRoom(int32_t blocks, ModelId model);
  // With residency: unloads models (see ModelResidency::MakeRoomForBlocks) so
  // that `blocks` more KV blocks fit, keeping `keep`; as a last resort turns
  // swapped requests of other models into recompute. False if not enough.
  bool MakeRoomInMemory(int32_t blocks, ModelId keep);
  // Waiting requests of models unloaded this step (`demoted_`) go back to
  // preparing.
  void DemoteUnloaded(absl::Time now);
  void ScheduleSequence(Record& record, int32_t num_tokens);
  bool ScheduledNow(const Record& record) const {
    return planning_ && record.scheduled_step == plan_.step;
  }
  void Unschedule(Record& record);
  // The plan is built in segments (decodes, continuing prefills, then
  // admissions); EndPlanSegment closes the current one.
  void EndPlanSegment();
  // Removes plan entry `index`, keeping the segments contiguous and ordered.
  void RemovePlanEntry(size_t index);
  void MovePlanEntry(size_t from, size_t to);
  // Preempts a running request (swap if configured and possible, else
  // recompute) and tells the policy.
  void Preempt(Record& record, absl::Time now);
  bool CanBeVictim(const Record& record) const;
  // Asks the policy for a victim ranked below `beneficiary`; nullptr if none
  // usable.
  Record* PickVictim(const Record& beneficiary, bool beneficiary_running);

  // --- Shared helpers (scheduler.cc).
  Record* Find(RequestId id);
  const Record* Find(RequestId id) const;
  Record& CreateRecord(internal::Submission& submission, absl::Time now);
  // Sets the new record's workflow from its parent (live or remembered);
  // returns why the call cannot join it (another user's), or "" when fine.
  std::string JoinWorkflow(Record& record);
  // Running-list membership, with the per-class running counts and borrow
  // status that go with it.
  void AddToList(Record& record, internal::RunList list);
  // Prefill finished: same running sequence, other list.
  void MoveToDecoding(Record& record);
  void LinkIntoList(Record& record, internal::RunList list);
  void UnlinkFromList(Record& record);
  void AddBlock(Record& record, BlockId block) {
    record.device_blocks.push_back(block);
    ++class_blocks_[record.work_class.value()];
    if (record.prefill_reserve > 0) {
      --record.prefill_reserve;
      --prefill_reserved_;
    }
  }
  void DropPrefillReserve(Record& record) {
    prefill_reserved_ -= record.prefill_reserve;
    record.prefill_reserve = 0;
  }
  // Whether `cls` runs beyond its cap or budget right now.
  bool ClassOver(uint32_t cls) const;
  void MarkBorrowed(Record& record);
  void ClearBorrowed(Record& record);
  // The most recently borrowed sequence whose class is still over its
  // limits, other than `beneficiary`; nullptr if none.
  Record* PickBorrowedVictim(const Record& beneficiary);
  // Applies the outcome of the plan's model loads.
  void FinishModelLoads(const StepOutcome& outcome, absl::Time now);
  // An engine-reported failure: retry per the class policy or fail.
  void RetryOrFail(Record& record, const std::string& error, absl::Time now);
  void RemoveFromList(Record& record);
  // Releases the tail of record's block table beyond `keep` blocks (and
  // what was sent or registered of it).
  void ReleaseDeviceBlocks(Record& record, size_t keep);
  // Releases all of record's device blocks and forgets what the engine was
  // sent; true when the engine held state for it (the caller lists the drop).
  bool DropDeviceState(Record& record);
  // Ends a live request: frees what it holds, tells policy, sink and host.
  void Terminate(Record& record, RequestPhase phase, FinishReason reason,
                 std::string message, absl::Time now);
  RequestEvent EventFor(RequestEventKind kind, const Record& record, absl::Time now) const;
  void Emit(RequestEventKind kind, const Record& record, absl::Time now);
  void RegisterFullBlocks(Record& record);
  int32_t BlocksFor(int32_t positions) const {
    return (positions + block_size_ - 1) / block_size_;
  }
  int32_t running_count() const {
    return static_cast<int32_t>(decoding_.size() + prefilling_.size());
  }

  // How many records ahead the per-sequence loops prefetch, and how: the
  // first `lines` cache lines of the record (see RequestRecord's layout).
  static constexpr size_t kRecordPrefetch = 8;
  static void PrefetchRecord(const Record& record, int lines) {
    const char* p = reinterpret_cast<const char*>(&record);
    for (int l = 0; l < lines; ++l) __builtin_prefetch(p + 64 * l);
  }

  const SchedulerOptions options_;
  const int32_t block_size_;
  const int32_t chunk_cap_;
  // Per model, copied out of options_ for the per-sequence loops.
  std::vector<int32_t> context_length_;
  std::vector<int32_t> vocab_size_;
  internal::Inbox inbox_;
  BlockAllocator allocator_;
  std::optional<PrefixCache> prefix_cache_;
  std::unique_ptr<Policy> policy_;
  MetricsSink* sink_;
  internal::ModelResidency residency_;
  // Per model, requests waiting for it to load, in arrival order; entries of
  // requests that ended meanwhile are skipped when promoted.
  std::vector<std::vector<std::pair<uint32_t, RequestId>>> preparing_;
  std::vector<ModelId> loaded_;
  std::vector<ModelId> failed_models_;
  std::vector<ModelId> demoted_;
  int32_t num_preparing_ = 0;

  std::vector<Record> slab_;
  std::vector<uint32_t> free_slots_;
  absl::flat_hash_map<RequestId, uint32_t> slot_of_;
  uint64_t next_arrival_seq_ = 0;
  // Ended requests that later calls may still name as their parent.
  internal::WorkflowTable workflows_;

  std::vector<uint32_t> decoding_;
  std::vector<uint32_t> prefilling_;
  // Per work class: running sequences and device blocks they hold.
  std::vector<int32_t> class_running_;
  std::vector<int32_t> class_blocks_;
  // Per class with a hard KV budget: the most its running sequences can grow
  // to, so admission keeps growth within the budget without preemption.
  std::vector<int32_t> class_reserved_;
  // Sum of RequestRecord::prefill_reserve over prefilling requests.
  int32_t prefill_reserved_ = 0;
  std::vector<uint32_t> borrowed_;
  // Retried requests whose engine state must be dropped: listed in the next
  // plan's `preempted` (recompute).
  std::vector<RequestId> pending_drops_;
  int32_t num_waiting_ = 0;
  int32_t num_swapped_ = 0;

  // Min-heap of (deadline, id) for requests with finite deadlines; entries
  // of ended requests are skipped lazily.
  std::vector<std::pair<absl::Time, RequestId>> deadlines_;

  // Per-step buffers, reserved once.
  StepPlan plan_;
  std::vector<uint32_t> plan_slots_;
  // Ends of the plan's closed segments (decodes, continuing prefills) and how
  // many are closed; the open segment runs to the end of the plan.
  size_t plan_segment_end_[2] = {0, 0};
  int plan_segment_ = 0;
  std::vector<uint32_t> snapshot_;
  // Prefix-cache blocks found by the last CountPrefixHits.
  std::vector<BlockId> hit_blocks_;
  std::vector<internal::Submission> drained_;
  std::vector<RequestId> cancels_;
  std::vector<RequestId> to_release_;
  std::vector<BlockId> host_release_after_step_;
  std::vector<ServedTokens> served_;
  int32_t budget_ = 0;
  // True inside Plan(): only then may a scheduled request be unscheduled.
  bool planning_ = false;
  bool plan_outstanding_ = false;
  absl::Time last_now_ = absl::InfinitePast();

  SchedulerStats counters_;
};

}  // namespace hearth

#endif  // HEARTH_SCHEDULER_SCHEDULER_IMPL_H_

// File: src/scheduler/scheduler_state.h
//
// Scheduler::Impl's state, grouped by the room that decides it, so that a
// room's state is one member of Impl and what a phase touches can be read
// off which groups it names:
//   PlanLimits   construction: what the per-sequence loops read of the
//                options (scheduler.cc)
//   TokenBudget  the step's token budget, its TPOT allowance and the
//                background cap (token_budget.cc; asked by the plan)
//   ModelQueues  requests waiting on model loads (scheduler_residency.cc)
//   IntakeState  arrivals, workflows, deadlines and the inbox's batches
//                (scheduler_intake.cc, scheduler_changes.cc)
//   PlanState    the plans being built or in flight (scheduler_plan.cc,
//                scheduler_overlap.cc, scheduler_admission.cc)
//   StepOutputs  what a Plan/Complete hands to the inbox, the policy and
//                the next plan (scheduler_lifecycle.cc)
//   StatsState   counters and their published copy (scheduler.cc)
// Beside them, the planner's value types: Admission and AdmissionNeed
// (scheduler_admission.cc) and Projection (scheduler_overlap.cc).
// Engine thread only, except StatsState::published (any thread). Every
// buffer is reserved at construction (Scheduler::Impl::Impl), so a steady
// step allocates nothing.

#ifndef HEARTH_SRC_SCHEDULER_SCHEDULER_STATE_H_
#define HEARTH_SRC_SCHEDULER_SCHEDULER_STATE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "hearth/policy/policy.h"
#include "hearth/scheduler/scheduler.h"
#include "kv/kv_cache_manager.h"
#include "scheduler/deadline_heap.h"
#include "scheduler/inbox.h"
#include "scheduler/published_value.h"
#include "scheduler/request_record.h"
#include "scheduler/step_budget.h"
#include "scheduler/workflow_table.h"

namespace hearth::internal {

struct PlanLimits {
  int32_t block_size = 0;
  // The longest prefill chunk: max_prefill_chunk_tokens, else
  // max_batched_tokens.
  int32_t chunk_cap = 0;
  // Per model.
  std::vector<int32_t> context_length;
  std::vector<int32_t> vocab_size;
};

// The step's token budget. The planner asks it what a sequence may take and
// tells it what each took; it owns the TPOT allowance that sizes the next
// step and the background cap (PrefillRules).
class TokenBudget {
 public:
  TokenBudget(const StepTimeModel& host_model, const std::vector<WorkClassConfig>& classes);

  // Policy::prefill_rules, asked once at construction.
  void set_prefill_rules(PrefillRules rules);
  const PrefillRules& prefill_rules() const { return prefill_rules_; }

  // --- The step being built.
  // Sizes the step: max_batched_tokens, cut to keep the tightest TPOT target
  // on pace (StepBudget), but never below every decode plus one block of
  // prefill; background prefill capped only while something decodes.
  void StartStep(int32_t decoding, int32_t max_batched_tokens, int32_t block_size);
  int32_t left() const { return left_; }
  // Whether prefill tokens of a request with this TTFT deadline count
  // against the background cap (no TTFT target, and a cap set).
  bool Background(absl::Time ttft_deadline) const {
    return prefill_rules_.background_tokens > 0 && ttft_deadline == absl::InfiniteFuture();
  }
  // Prefill tokens a request may take now: at most `rest` and `chunk_cap`,
  // within the budget and, for background work, the background cap.
  int32_t PrefillRoom(int32_t rest, int32_t chunk_cap, bool background) const {
    return std::min({rest, chunk_cap, left_, background ? background_left_ : INT32_MAX});
  }
  // Whether background prefill has had its share of this step.
  bool BackgroundSpent() const {
    return prefill_rules_.background_tokens > 0 && background_left_ <= 0;
  }
  // `tokens` scheduled (`background_prefill`: counted against the cap too).
  void Take(int32_t tokens, bool background_prefill) {
    left_ -= tokens;
    if (background_prefill) background_left_ -= tokens;
  }
  // An entry taken out of the plan gives its tokens back.
  void GiveBack(int32_t tokens) { left_ += tokens; }

  // --- Completed steps.
  // Whether any class has a TPOT target (else the budget is the maximum).
  bool tracks_tpot() const { return !class_tpot_.empty(); }
  // `cls`'s TPOT target; InfiniteDuration when it has none.
  absl::Duration tpot_of(uint32_t cls) const {
    return cls < class_tpot_.size() ? class_tpot_[cls] : absl::InfiniteDuration();
  }
  // One completed step: `tokens` batched, `took` from its start to its end.
  void ObserveStep(int32_t tokens, absl::Duration took) { fit_.Observe(tokens, took); }
  // The longest next step that keeps every decoding request with a TPOT
  // target on pace; InfiniteDuration: no limit.
  void set_tpot_step_allowance(absl::Duration allowance) { tpot_step_allowance_ = allowance; }

 private:
  // Step time against batched tokens, fitted from completed steps.
  StepBudget fit_;
  // WorkClassConfig::tpot_slo by class (InfiniteDuration: none); empty when
  // no class has a target, which turns the TPOT-aware budget off.
  std::vector<absl::Duration> class_tpot_;
  absl::Duration tpot_step_allowance_ = absl::InfiniteDuration();
  PrefillRules prefill_rules_;
  // Tokens the step being built may still batch.
  int32_t left_ = 0;
  // What requests without a TTFT target may still prefill this step.
  int32_t background_left_ = 0;
};

struct ModelQueues {
  // Per model, requests waiting for it to load, in arrival order; entries of
  // requests that ended meanwhile are skipped when promoted.
  std::vector<std::vector<std::pair<uint32_t, RequestId>>> preparing;
  std::vector<ModelId> loaded;
  std::vector<ModelId> failed;
  std::vector<ModelId> demoted;
};

struct IntakeState {
  // Requests whose tables are reserved at construction (up to
  // max_pending_requests); beyond it tables grow as needed.
  static constexpr int32_t kReservedBacklog = 1 << 16;
  // Ended requests remembered as possible workflow parents: as many as may
  // be pending, within these bounds (a small scheduler is cheap to create).
  static constexpr int32_t kMinRememberedEnds = 1 << 10;
  static constexpr int32_t kMaxRememberedEnds = 1 << 16;

  IntakeState(absl::Duration workflow_retention, size_t remembered_ends)
      : workflows(workflow_retention, remembered_ends) {}
  uint64_t next_arrival_seq = 0;
  // Ended requests that later calls may still name as their parent.
  WorkflowTable workflows;
  // Finite deadlines of requests; entries of ended requests are skipped
  // when popped.
  DeadlineHeap deadlines;
  // The inbox's batches, drained at the start of each Plan.
  std::vector<Submission> drained;
  std::vector<Cancellation> cancels;
  std::vector<RequestChange> changes;
  // Parallel sampling: groups whose sample 0 produced its first token or
  // ended ({its id, the group's size}); the next Plan lets the other
  // samples run.
  std::vector<std::pair<RequestId, int32_t>> group_releases;
};

// What Scheduler::Impl::TryAdmit answers.
enum class Admission {
  kAdmitted,
  // Not now, for a reason particular to this request (its class's limits).
  kDeclined,
  // No sequence slot or memory, though the request is entitled to them.
  kNoRoom,
  // Its adapter would exceed ResidencyConfig::max_adapters_per_step.
  kAdapterBusy,
};
// What admitting a request takes: the KV room's measure of it (where it
// starts, its first chunk, its blocks, its class reservation) and whether
// it falls beyond its class's limits.
struct AdmissionNeed {
  AdmissionQuery query;
  KvAdmission kv;
  bool beyond_limits = false;
};
// Where a running record's sequence stands for the plan being built: its
// own `computed` and `length`, or, when it is in the step in flight
// (overlapped planning), where that step leaves it, and whether its next
// input is the token that step samples.
struct Projection {
  int32_t computed = 0;
  int32_t length = 0;
  bool input_pending = false;
};

struct PlanState {
  PlanState() = default;
  // `plan` and `slots` point into `buffers`.
  PlanState(const PlanState&) = delete;
  PlanState& operator=(const PlanState&) = delete;

  // Two plans (one in flight while the next is built, with
  // overlap_planning), each with the slots of its entries' records
  // (kVoidSlot: the entry is voided). `plan` and `slots` are the plan being
  // built or completed.
  PlanBuffer buffers[2];
  StepPlan* plan = &buffers[0].plan;
  std::vector<uint32_t>* slots = &buffers[0].slots;
  // Plans handed out and not yet completed (0..2).
  int outstanding = 0;
  // While a plan is built ahead: the step in flight (UINT64_MAX otherwise).
  uint64_t in_flight_step = UINT64_MAX;
  // Deferred host blocks (KvCacheManager) that belong to the step in flight:
  // freed at its Complete, the rest at the next one.
  size_t host_deferred_in_flight = 0;
  // When the previous outcome said its step ended: with overlap the next
  // step's engine time starts there, not at its plan's `now`.
  absl::Time last_done = absl::InfinitePast();
  // With speculative decoding, beside `slots`: the most draft tokens each
  // entry may take (0 for anything but a decode).
  std::vector<int32_t> draft_room;
  // Ends of the plan's closed segments (decodes, continuing prefills) and how
  // many are closed; the open segment runs to the end of the plan.
  size_t segment_end[2] = {0, 0};
  int segment = 0;
  // The run list walked, copied: walking it may move records between lists.
  std::vector<uint32_t> snapshot;
  // Borrowers offered to Policy::PickReclaimVictim, and their slots.
  std::vector<RequestView> reclaimable;
  std::vector<uint32_t> reclaimable_slots;
  // True inside Plan(): only then may a scheduled request be unscheduled.
  bool planning = false;
  absl::Time last_now = absl::InfinitePast();
  // The latest step's end as applied (StepOutcome::completed_at, clamped
  // to never precede the step before it).
  absl::Time latest_done = absl::InfinitePast();
};

struct StepOutputs {
  // Results of requests ended during the current Plan/Complete, not yet
  // handed to the inbox.
  std::vector<RequestResult> ended;
  std::vector<ReleasedSequence> to_release;
  // What the completed step served, for Policy::OnServed.
  std::vector<ServedTokens> served;
  // Requests stopped by an outcome (retried, out of KV) whose engine state
  // must be dropped: listed in the next plan's `preempted` (recompute).
  std::vector<Preemption> pending_drops;
};

struct StatsState {
  SchedulerStats counters;
  PublishedValue<SchedulerStats> published;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_SCHEDULER_STATE_H_

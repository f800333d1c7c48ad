// File: src/scheduler/request_record.h
//
// The scheduler's mutable state for one live request; its KV state (`kv`)
// is changed only through KvManager. Engine thread only. `tokens` is reserved at
// creation for the request's largest possible size (prompt +
// max_new_tokens), so steady-state steps never reallocate it and the spans
// handed out in a StepPlan stay valid until Complete().

#ifndef HEARTH_SCHEDULER_REQUEST_RECORD_H_
#define HEARTH_SCHEDULER_REQUEST_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_state.h"
#include "hearth/request/request_view.h"
#include "hearth/scheduler/step_plan.h"
#include "kv/kv_manager.h"
#include "scheduler/encoder_planner.h"
#include "scheduler/workflow_table.h"

namespace hearth::internal {

// Which running list a record sits in.
enum class RunList : uint8_t { kNone, kDecoding, kPrefilling };

struct alignas(64) RequestRecord {
  // Hot fields first: Plan's per-sequence loop reads the first two cache
  // lines (this one and the block table's) and prefetches them; Complete
  // reads the first (and, for requests with token ids, their tokens and
  // hashes).
  RequestId id;
  uint32_t slot = 0;
  RequestPhase phase = RequestPhase::kQueued;
  RunList list = RunList::kNone;
  bool has_token_ids : 1 = false;
  // No token produced yet. The same as first_token_time being infinite, but
  // here on the line Complete reads anyway, so that a decode does not touch
  // a second line of the record.
  bool awaiting_first_token : 1 = true;
  // RequestKind::kEmbed, and its Pooling::kMean (the plan entry's flags).
  bool embed : 1 = false;
  bool mean_pool : 1 = false;
  // RequestSpec::encoder_spans is not empty (`spans`).
  bool has_spans : 1 = false;
  int32_t prompt_tokens = 0;
  int32_t max_new_tokens = 0;
  int32_t output_tokens = 0;
  // Positions whose KV is computed (applied at Complete).
  int32_t computed = 0;
  // Index in the plan of step `scheduled_step` (meaningless otherwise).
  int32_t plan_index = -1;
  ModelId model;
  UserId user;
  WorkClassId work_class;
  // RequestSpec::handle: every plan entry carries it. On a line of its own
  // it was a third line per sequence per step, a cache miss per sequence
  // once the policy's per-step state crowds the records out of the cache.
  uint64_t handle = 0;
  // Last step whose plan schedules it.
  uint64_t scheduled_step = 0;
  // -- Second line: the KV state, its block table first (KvManager).
  SequenceKv kv;
  absl::Time first_token_time = absl::InfiniteFuture();

  // -- Cold: touched on events (admission, preemption, the end).
  // Index in its running list (`list`); read when it leaves the list.
  int32_t list_index = -1;
  // Prompt ids then sampled ids; empty when the request came without ids.
  std::vector<TokenId> tokens;
  // Its encoder spans with their cache keys (EncoderPlanner).
  std::vector<SpanRecord> spans;
  // Step in which it was admitted or swapped in; not a preemption victim then.
  uint64_t admitted_step = 0;
  // Step in which it was last preempted; not readmitted in that step, which
  // would only undo the preemption that made room for someone else.
  uint64_t preempted_step = 0;
  RequestId parent;
  WorkflowInfo workflow;
  int32_t priority = 0;
  OutputLengthPrediction predicted_output;
  uint64_t arrival_seq = 0;
  absl::Time arrival_time = absl::InfinitePast();
  absl::Time deadline = absl::InfiniteFuture();
  int32_t cached_prompt_tokens = 0;
  int32_t preemptions = 0;
  int32_t retries = 0;
  // Engine out-of-KV reports since it last produced a token, and its
  // output_tokens at the latest one (SchedulerOptions::max_out_of_kv_reports).
  int32_t out_of_kv_reports = 0;
  int32_t out_of_kv_output_mark = -1;
  // Parallel sampling (RequestSpec::num_samples): the group's size and this
  // sample's index (sample 0's id is id - sample_index); `group_wait`: held
  // until sample 0's first token.
  int32_t num_samples = 1;
  int32_t sample_index = 0;
  bool group_wait = false;
  // Arrival + the class's queue timeout (InfiniteFuture if none): ends the
  // request if it has not been admitted by then.
  absl::Time queue_deadline = absl::InfiniteFuture();
  absl::Time first_admit_time = absl::InfiniteFuture();
  // Effective SLO targets (RequestView::ttft_slo), and arrival_time +
  // ttft_slo. `own_*`: set by the request itself, so that a change of class
  // keeps it.
  absl::Duration ttft_slo = absl::InfiniteDuration();
  absl::Duration tpot_slo = absl::InfiniteDuration();
  absl::Time ttft_deadline = absl::InfiniteFuture();
  bool own_ttft_slo = false;
  bool own_tpot_slo = false;
  std::string label;

  int32_t length() const { return prompt_tokens + output_tokens; }
  bool decoding() const {
    return output_tokens > 0 && computed == length() - 1;
  }

  // `device_blocks`: the blocks its table holds (KvManager keeps the table).
  RequestView View(int32_t device_blocks) const {
    RequestView v;
    v.id = id;
    v.user = user;
    v.work_class = work_class;
    v.model = model;
    v.parent = parent;
    v.workflow = workflow.root;
    v.workflow_arrival_seq = workflow.arrival_seq;
    v.workflow_arrival_time = workflow.arrival_time;
    v.workflow_depth = workflow.depth;
    v.priority = priority;
    v.phase = phase;
    v.prompt_tokens = prompt_tokens;
    v.max_new_tokens = max_new_tokens;
    v.predicted_output = predicted_output;
    v.output_tokens = output_tokens;
    v.computed_tokens = computed;
    v.device_blocks = device_blocks;
    v.preemptions = preemptions;
    v.arrival_seq = arrival_seq;
    v.arrival_time = arrival_time;
    v.deadline = deadline;
    v.ttft_slo = ttft_slo;
    v.tpot_slo = tpot_slo;
    v.ttft_deadline = ttft_deadline;
    v.first_token_time = first_token_time;
    return v;
  }
};

static_assert(offsetof(RequestRecord, handle) < 64, "plan entries read the handle");
static_assert(offsetof(RequestRecord, kv) == 64,
              "the fields every step reads must fill the record's first cache line, "
              "and the block table start the second");

// A plan and, per entry, the slot of its request's record.
struct PlanBuffer {
  StepPlan plan;
  std::vector<uint32_t> slots;
};
// An entry of an outstanding plan that no longer speaks for its record.
inline constexpr uint32_t kVoidSlot = UINT32_MAX;

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_REQUEST_RECORD_H_

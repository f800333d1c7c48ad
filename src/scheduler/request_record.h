// File: src/scheduler/request_record.h
//
// The scheduler's mutable state for one live request. Engine thread only.
// Vectors are reserved at creation for the request's largest possible size
// (prompt + max_new_tokens), so steady-state steps never reallocate them and
// spans handed out in a StepPlan stay valid until Complete().

#ifndef HEARTH_SCHEDULER_REQUEST_RECORD_H_
#define HEARTH_SCHEDULER_REQUEST_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_state.h"
#include "hearth/request/request_view.h"
#include "scheduler/workflow_table.h"

namespace hearth::internal {

// Which running list a record sits in.
enum class RunList : uint8_t { kNone, kDecoding, kPrefilling };

struct alignas(64) RequestRecord {
  // Hot fields first: the per-step loops touch only the first cache lines.
  RequestId id;
  uint32_t slot = 0;
  RequestPhase phase = RequestPhase::kWaiting;
  RunList list = RunList::kNone;
  bool has_token_ids = false;
  bool needs_full_table = true;
  // The engine may hold state for this request (it appeared in a plan since
  // its last preemption).
  bool engine_has_state = false;
  int32_t prompt_tokens = 0;
  int32_t max_new_tokens = 0;
  int32_t output_tokens = 0;
  // Positions whose KV is computed (applied at Complete).
  int32_t computed = 0;
  int32_t list_index = -1;
  // Index in the plan of step `scheduled_step` (meaningless otherwise).
  int32_t plan_index = -1;
  // How many leading device blocks went through prefix-cache registration.
  int32_t registered_blocks = 0;
  // How many leading device blocks the engine has been sent.
  int32_t blocks_sent = 0;
  ModelId model;
  // Last step whose plan schedules it.
  uint64_t scheduled_step = 0;
  // -- second cache line: what Complete() reads of every sequence besides
  // the first line (the per-sequence loops prefetch exactly these two).
  std::vector<BlockId> device_blocks;
  absl::Time first_token_time = absl::InfiniteFuture();
  UserId user;
  WorkClassId work_class;
  // -- colder
  // Prompt ids then sampled ids; empty when the request came without ids.
  std::vector<TokenId> tokens;

  // Step in which it was admitted or swapped in; not a preemption victim then.
  uint64_t admitted_step = 0;
  // Step in which it was last preempted; not readmitted in that step, which
  // would only undo the preemption that made room for someone else.
  uint64_t preempted_step = 0;
  RequestId parent;
  WorkflowInfo workflow;
  int32_t priority = 0;
  uint64_t arrival_seq = 0;
  absl::Time arrival_time = absl::InfinitePast();
  absl::Time deadline = absl::InfiniteFuture();
  // Chain hashes of the full blocks whose tokens are known.
  std::vector<uint64_t> block_hashes;
  std::vector<BlockId> host_blocks;
  int32_t cached_prompt_tokens = 0;
  int32_t preemptions = 0;
  int32_t retries = 0;
  // Blocks reserved against a hard class budget while running.
  int32_t reserved_blocks = 0;
  // While prefilling: blocks its remaining prompt will still take, held back
  // from admissions so that concurrent long prompts cannot overcommit the
  // cache and preempt each other in a loop.
  int32_t prefill_reserve = 0;
  // Running beyond its class's cap or KV budget on idle capacity; such
  // sequences are reclaimed (preempted) first. Index into the scheduler's
  // borrowed list while set.
  bool borrowed = false;
  int32_t borrowed_index = -1;
  // Arrival + the class's queue timeout (InfiniteFuture if none): ends the
  // request if it has not been admitted by then.
  absl::Time queue_deadline = absl::InfiniteFuture();
  absl::Time first_admit_time = absl::InfiniteFuture();
  std::string label;

  int32_t length() const { return prompt_tokens + output_tokens; }
  bool decoding() const {
    return output_tokens > 0 && computed == length() - 1;
  }

  RequestView View() const {
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
    v.output_tokens = output_tokens;
    v.computed_tokens = computed;
    v.device_blocks = static_cast<int32_t>(device_blocks.size());
    v.preemptions = preemptions;
    v.arrival_seq = arrival_seq;
    v.arrival_time = arrival_time;
    v.deadline = deadline;
    return v;
  }
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_REQUEST_RECORD_H_

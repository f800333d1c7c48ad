// hearth_scheduler_plan and the read-only plan view.

#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "capi/c_handles.h"
#include "capi/c_status.h"
#include "capi/c_time.h"

using hearth::capi::Fail;
using hearth::capi::FromStatus;
using hearth::capi::Guard;

namespace {

// The plan's block ids are handed out in place: a BlockId is a uint32_t in
// a standard-layout wrapper, so an array of them is an array of uint32_t to
// a C reader, and a sequence's table costs nothing to expose however long
// it is (copying whole tables made every step O(all blocks held)).
static_assert(sizeof(hearth::BlockId) == sizeof(uint32_t) &&
              alignof(hearth::BlockId) == alignof(uint32_t) &&
              std::is_standard_layout_v<hearth::BlockId> &&
              std::is_trivially_copyable_v<hearth::BlockId>);

const uint32_t* BlockArray(absl::Span<const hearth::BlockId> blocks) {
  return blocks.empty() ? nullptr : reinterpret_cast<const uint32_t*>(blocks.data());
}

// Rebuilds `view` for `plan`; keeps the vector's capacity, so a steady
// state allocates nothing.
void BuildView(const hearth::StepPlan& plan, hearth_plan& view) {
  view.plan = &plan;
  view.sequences.resize(plan.sequences.size());
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    const hearth::ScheduledSequence& s = plan.sequences[i];
    hearth_sequence& c = view.sequences[i];
    c.id = s.id.value();
    c.model = s.model.value();
    c.start_position = s.start_position;
    c.num_tokens = s.num_tokens;
    c.sample = s.sample ? 1 : 0;
    c.decode = s.decode ? 1 : 0;
    c.full_block_table = s.full_block_table ? 1 : 0;
    c.block_table = BlockArray(s.block_table);
    c.num_block_table = s.block_table.size();
    c.new_blocks = BlockArray(s.new_blocks);
    c.num_new_blocks = s.new_blocks.size();
    c.token_ids = s.token_ids.empty() ? nullptr : s.token_ids.data();
    c.num_token_ids = s.token_ids.size();
    c.handle = s.handle;
  }
}

const std::vector<hearth::BlockCopy>* CopiesOf(const hearth::StepPlan& plan,
                                               int list) {
  switch (list) {
    case HEARTH_PLAN_SWAP_OUT: return &plan.swap_out;
    case HEARTH_PLAN_SWAP_IN: return &plan.swap_in;
    case HEARTH_PLAN_COPY_ON_WRITE: return &plan.copy_on_write;
    default: return nullptr;
  }
}

hearth_status EntryAt(const hearth::StepPlan& plan, int list, size_t index,
                      hearth_plan_entry& out) {
  out = hearth_plan_entry{};
  if (list == HEARTH_PLAN_PREEMPTED) {
    const hearth::Preemption& p = plan.preempted[index];
    out.id = p.id.value();
    out.kind = p.mode == hearth::PreemptionMode::kSwap ? 1 : 0;
    out.source = static_cast<uint32_t>(p.cause);
    out.handle = p.handle;
  } else if (list == HEARTH_PLAN_RELEASED) {
    out.id = plan.released[index].id.value();
    out.handle = plan.released[index].handle;
  } else if (list == HEARTH_PLAN_VOIDED) {
    out.id = plan.voided[index].id.value();
    out.handle = plan.voided[index].handle;
  } else if (list == HEARTH_PLAN_MODEL_COMMANDS) {
    const hearth::ModelCommand& m = plan.model_commands[index];
    out.kind = m.kind == hearth::ModelCommandKind::kUnload ? 1 : 0;
    out.source = m.model.value();
  } else {
    const hearth::BlockCopy& c = (*CopiesOf(plan, list))[index];
    out.id = c.id.value();
    out.source = c.source.value();
    out.target = c.target.value();
  }
  return HEARTH_OK;
}

}  // namespace

extern "C" {

hearth_status hearth_scheduler_plan(hearth_scheduler* scheduler, double now_s,
                                    const hearth_plan** out,
                                    hearth_error** error) {
  return Guard(error, "hearth_scheduler_plan", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_plan", error);
    HEARTH_C_REQUIRE(out, "hearth_scheduler_plan", error);
    *out = nullptr;
    absl::StatusOr<absl::Time> now = hearth::capi::TimeFromSeconds(
        now_s, "hearth_scheduler_plan: now_s", hearth::capi::Infinity::kNone);
    if (!now.ok()) return FromStatus(now.status(), error);
    absl::StatusOr<const hearth::StepPlan*> plan = scheduler->scheduler->Plan(*now);
    if (!plan.ok()) return FromStatus(plan.status(), error);
    // Two views, so that the one of a plan still outstanding stays valid.
    hearth_plan& view = scheduler->plan_views[scheduler->next_view];
    scheduler->next_view ^= 1;
    BuildView(**plan, view);
    *out = &view;
    return HEARTH_OK;
  });
}

uint64_t hearth_plan_step(const hearth_plan* plan) {
  return plan == nullptr || plan->plan == nullptr ? 0 : plan->plan->step;
}

int32_t hearth_plan_num_batched_tokens(const hearth_plan* plan) {
  return plan == nullptr || plan->plan == nullptr ? 0
                                                  : plan->plan->num_batched_tokens;
}

size_t hearth_plan_count(const hearth_plan* plan, hearth_plan_list list) {
  if (plan == nullptr || plan->plan == nullptr) return 0;
  const hearth::StepPlan& p = *plan->plan;
  switch (hearth::capi::RawEnum(list)) {
    case HEARTH_PLAN_SEQUENCES: return p.sequences.size();
    case HEARTH_PLAN_PREEMPTED: return p.preempted.size();
    case HEARTH_PLAN_RELEASED: return p.released.size();
    case HEARTH_PLAN_SWAP_OUT: return p.swap_out.size();
    case HEARTH_PLAN_SWAP_IN: return p.swap_in.size();
    case HEARTH_PLAN_COPY_ON_WRITE: return p.copy_on_write.size();
    case HEARTH_PLAN_MODEL_COMMANDS: return p.model_commands.size();
    case HEARTH_PLAN_VOIDED: return p.voided.size();
  }
  return 0;
}

hearth_status hearth_plan_sequence(const hearth_plan* plan, size_t index,
                                   hearth_sequence* out, hearth_error** error) {
  return Guard(error, "hearth_plan_sequence", [&] {
    HEARTH_C_REQUIRE(plan, "hearth_plan_sequence", error);
    HEARTH_C_REQUIRE(out, "hearth_plan_sequence", error);
    if (index >= plan->sequences.size() || plan->plan == nullptr) {
      return Fail(error, HEARTH_OUT_OF_RANGE,
                  absl::StrCat("hearth_plan_sequence: index ", index,
                               " is past the plan's ", plan->sequences.size(),
                               " sequences"));
    }
    *out = plan->sequences[index];
    return HEARTH_OK;
  });
}

int32_t hearth_plan_sequence_input_pending(const hearth_plan* plan, size_t index) {
  if (plan == nullptr || plan->plan == nullptr || index >= plan->plan->sequences.size()) {
    return 0;
  }
  return plan->plan->sequences[index].input_pending ? 1 : 0;
}

int32_t hearth_plan_sequence_draft_tokens(const hearth_plan* plan, size_t index) {
  if (plan == nullptr || plan->plan == nullptr || index >= plan->plan->sequences.size()) {
    return 0;
  }
  return plan->plan->sequences[index].draft_tokens;
}

hearth_status hearth_plan_entry_at(const hearth_plan* plan,
                                   hearth_plan_list list, size_t index,
                                   hearth_plan_entry* out,
                                   hearth_error** error) {
  return Guard(error, "hearth_plan_entry_at", [&] {
    HEARTH_C_REQUIRE(plan, "hearth_plan_entry_at", error);
    HEARTH_C_REQUIRE(out, "hearth_plan_entry_at", error);
    const int raw = hearth::capi::RawEnum(list);
    if (raw < HEARTH_PLAN_PREEMPTED || raw > HEARTH_PLAN_VOIDED) {
      return Fail(error, HEARTH_INVALID_ARGUMENT,
                  absl::StrCat("hearth_plan_entry_at: list ", raw,
                               " is not one of PREEMPTED .. VOIDED "
                               "(sequences are read with hearth_plan_sequence)"));
    }
    const size_t count = hearth_plan_count(plan, list);
    if (index >= count) {
      return Fail(error, HEARTH_OUT_OF_RANGE,
                  absl::StrCat("hearth_plan_entry_at: index ", index,
                               " is past the list's ", count, " entries"));
    }
    return EntryAt(*plan->plan, raw, index, *out);
  });
}

}  // extern "C"

// hearth_scheduler_plan and the read-only plan view.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

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

// One sequence in C layout; arrays point into the plan.
// Every HEARTH_SEQUENCE_* bit; bit arithmetic on the bools, no branch per
// flag.
uint8_t SequenceFlags(const hearth::ScheduledSequence& s) {
  return static_cast<uint8_t>(
      static_cast<unsigned>(s.sample) * HEARTH_SEQUENCE_SAMPLE |
      static_cast<unsigned>(s.decode) * HEARTH_SEQUENCE_DECODE |
      static_cast<unsigned>(s.full_block_table) * HEARTH_SEQUENCE_FULL_BLOCK_TABLE |
      static_cast<unsigned>(s.input_pending) * HEARTH_SEQUENCE_INPUT_PENDING |
      static_cast<unsigned>(s.embed) * HEARTH_SEQUENCE_EMBED |
      static_cast<unsigned>(s.mean_pool) * HEARTH_SEQUENCE_MEAN_POOL |
      static_cast<unsigned>(s.pool) * HEARTH_SEQUENCE_POOL);
}

hearth_sequence SequenceOf(const hearth::ScheduledSequence& s) {
  hearth_sequence c;
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
  return c;
}

// Entries in one list of `plan` (0 for an unknown list).
size_t CountOf(const hearth::StepPlan& p, int list) {
  switch (list) {
    case HEARTH_PLAN_SEQUENCES: return p.sequences.size();
    case HEARTH_PLAN_PREEMPTED: return p.preempted.size();
    case HEARTH_PLAN_RELEASED: return p.released.size();
    case HEARTH_PLAN_SWAP_OUT: return p.swap_out.size();
    case HEARTH_PLAN_SWAP_IN: return p.swap_in.size();
    case HEARTH_PLAN_COPY_ON_WRITE: return p.copy_on_write.size();
    case HEARTH_PLAN_MODEL_COMMANDS: return p.model_commands.size();
    case HEARTH_PLAN_VOIDED: return p.voided.size();
    case HEARTH_PLAN_ENCODER_INPUTS: return p.encoder_inputs.size();
    case HEARTH_PLAN_ENCODER_FREES: return p.encoder_frees.size();
  }
  return 0;
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
  } else if (list == HEARTH_PLAN_ENCODER_INPUTS) {
    const hearth::EncoderInput& in = plan.encoder_inputs[index];
    out.id = in.id.value();
    out.kind = in.encode ? 1 : 0;
    out.source = static_cast<uint32_t>(in.entry);
    out.target = static_cast<uint32_t>(in.span_index);
    out.handle = in.handle;
  } else if (list == HEARTH_PLAN_ENCODER_FREES) {
    out.source = static_cast<uint32_t>(plan.encoder_frees[index]);
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

// Sequences as columns: O(sequences + new blocks + token ids). The columns
// are written through local pointers: a store to the uint8_t flags may alias
// anything, which would otherwise reload every vector's data pointer.
void BuildSequenceColumns(const hearth::StepPlan& plan, PlanArrays& a) {
  const size_t n = plan.sequences.size();
  for (auto* column : {&a.id, &a.handle, &a.num_block_table}) column->resize(n);
  a.model.resize(n);
  for (auto* column : {&a.start_position, &a.num_tokens, &a.draft_tokens}) column->resize(n);
  a.flags.resize(n);
  a.block_table.resize(n);
  a.block_offset.resize(n + 1);
  a.token_offset.resize(n + 1);
  a.blocks.clear();
  a.token_ids.clear();
  uint64_t* const id = a.id.data();
  uint64_t* const handle = a.handle.data();
  uint32_t* const model = a.model.data();
  int32_t* const start = a.start_position.data();
  int32_t* const tokens = a.num_tokens.data();
  int32_t* const drafts = a.draft_tokens.data();
  uint8_t* const flags = a.flags.data();
  const uint32_t** const table = a.block_table.data();
  uint64_t* const table_size = a.num_block_table.data();
  uint64_t* const block_offset = a.block_offset.data();
  uint64_t* const token_offset = a.token_offset.data();
  for (size_t i = 0; i < n; ++i) {
    const hearth::ScheduledSequence& s = plan.sequences[i];
    id[i] = s.id.value();
    handle[i] = s.handle;
    model[i] = s.model.value();
    start[i] = s.start_position;
    tokens[i] = s.num_tokens;
    drafts[i] = s.draft_tokens;
    table[i] = BlockArray(s.block_table);
    table_size[i] = s.block_table.size();
    block_offset[i] = a.blocks.size();
    token_offset[i] = a.token_ids.size();
    const absl::Span<const hearth::BlockId> gained =
        s.full_block_table ? s.block_table : s.new_blocks;
    for (hearth::BlockId b : gained) a.blocks.push_back(b.value());
    if (!s.token_ids.empty()) {
      a.token_ids.insert(a.token_ids.end(), s.token_ids.begin(), s.token_ids.end());
    }
    flags[i] = SequenceFlags(s);
  }
  block_offset[n] = a.blocks.size();
  token_offset[n] = a.token_ids.size();
}

void BuildArrays(const hearth::StepPlan& plan, PlanArrays& a) {
  BuildSequenceColumns(plan, a);
  for (int list = HEARTH_PLAN_PREEMPTED; list <= HEARTH_PLAN_MODEL_COMMANDS; ++list) {
    std::vector<hearth_plan_entry>& entries = a.lists[list - 1];
    entries.resize(CountOf(plan, list));
    for (size_t i = 0; i < entries.size(); ++i) EntryAt(plan, list, i, entries[i]);
  }
  for (auto [list, entries] : {std::pair{HEARTH_PLAN_ENCODER_INPUTS, &a.encoder_inputs},
                               std::pair{HEARTH_PLAN_ENCODER_FREES, &a.encoder_frees}}) {
    entries->resize(CountOf(plan, list));
    for (size_t i = 0; i < entries->size(); ++i) EntryAt(plan, list, i, (*entries)[i]);
  }
  a.built = true;
}

template <typename T>
const T* DataOrNull(const std::vector<T>& v) {
  return v.empty() ? nullptr : v.data();
}

// What hearth_plan_get_arrays reports, whole.
hearth_plan_arrays ArraysOf(const hearth::StepPlan& plan, const PlanArrays& a) {
  hearth_plan_arrays out{};
  out.step = plan.step;
  out.num_batched_tokens = plan.num_batched_tokens;
  out.num_decodes = plan.num_decodes;
  out.num_sequences = plan.sequences.size();
  out.id = DataOrNull(a.id);
  out.handle = DataOrNull(a.handle);
  out.model = DataOrNull(a.model);
  out.start_position = DataOrNull(a.start_position);
  out.num_tokens = DataOrNull(a.num_tokens);
  out.draft_tokens = DataOrNull(a.draft_tokens);
  out.flags = DataOrNull(a.flags);
  out.blocks = DataOrNull(a.blocks);
  out.block_offset = a.block_offset.data();
  out.block_table = DataOrNull(a.block_table);
  out.num_block_table = DataOrNull(a.num_block_table);
  out.token_ids = DataOrNull(a.token_ids);
  out.token_offset = a.token_offset.data();
  const auto list = [&a](int l) {
    return std::pair(a.lists[l - 1].size(), DataOrNull(a.lists[l - 1]));
  };
  std::tie(out.num_preempted, out.preempted) = list(HEARTH_PLAN_PREEMPTED);
  std::tie(out.num_released, out.released) = list(HEARTH_PLAN_RELEASED);
  std::tie(out.num_swap_out, out.swap_out) = list(HEARTH_PLAN_SWAP_OUT);
  std::tie(out.num_swap_in, out.swap_in) = list(HEARTH_PLAN_SWAP_IN);
  std::tie(out.num_copy_on_write, out.copy_on_write) = list(HEARTH_PLAN_COPY_ON_WRITE);
  std::tie(out.num_model_commands, out.model_commands) = list(HEARTH_PLAN_MODEL_COMMANDS);
  out.num_encoder_inputs = a.encoder_inputs.size();
  out.encoder_inputs = DataOrNull(a.encoder_inputs);
  out.num_encoder_frees = a.encoder_frees.size();
  out.encoder_frees = DataOrNull(a.encoder_frees);
  out.num_encoder_tokens = plan.num_encoder_tokens;
  return out;
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
    // Nothing is copied here: sequences are read one by one or, on the
    // first hearth_plan_get_arrays, as columns.
    hearth_plan& view = scheduler->plan_views[scheduler->next_view];
    scheduler->next_view ^= 1;
    view.plan = *plan;
    view.arrays.built = false;
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
  return CountOf(*plan->plan, hearth::capi::RawEnum(list));
}

hearth_status hearth_plan_get_arrays(const hearth_plan* plan, hearth_plan_arrays* out,
                                     size_t out_size, hearth_error** error) {
  return Guard(error, "hearth_plan_get_arrays", [&] {
    HEARTH_C_REQUIRE(plan, "hearth_plan_get_arrays", error);
    HEARTH_C_REQUIRE(out, "hearth_plan_get_arrays", error);
    if (out_size < offsetof(hearth_plan_arrays, id)) {
      return Fail(error, HEARTH_INVALID_ARGUMENT,
                  absl::StrCat("hearth_plan_get_arrays: out_size is ", out_size,
                               "; pass sizeof(hearth_plan_arrays) (", sizeof(hearth_plan_arrays),
                               " in this library)"));
    }
    if (plan->plan == nullptr) {
      return Fail(error, HEARTH_FAILED_PRECONDITION,
                  "hearth_plan_get_arrays: the plan was already completed");
    }
    if (!plan->arrays.built) BuildArrays(*plan->plan, plan->arrays);
    const hearth_plan_arrays whole = ArraysOf(*plan->plan, plan->arrays);
    std::memcpy(out, &whole, std::min(out_size, sizeof(whole)));
    return HEARTH_OK;
  });
}

hearth_status hearth_plan_sequence(const hearth_plan* plan, size_t index,
                                   hearth_sequence* out, hearth_error** error) {
  return Guard(error, "hearth_plan_sequence", [&] {
    HEARTH_C_REQUIRE(plan, "hearth_plan_sequence", error);
    HEARTH_C_REQUIRE(out, "hearth_plan_sequence", error);
    const size_t count = plan->plan == nullptr ? 0 : plan->plan->sequences.size();
    if (index >= count) {
      return Fail(error, HEARTH_OUT_OF_RANGE,
                  absl::StrCat("hearth_plan_sequence: index ", index,
                               " is past the plan's ", count, " sequences"));
    }
    *out = SequenceOf(plan->plan->sequences[index]);
    return HEARTH_OK;
  });
}

int32_t hearth_plan_sequence_input_pending(const hearth_plan* plan, size_t index) {
  if (plan == nullptr || plan->plan == nullptr || index >= plan->plan->sequences.size()) {
    return 0;
  }
  return plan->plan->sequences[index].input_pending ? 1 : 0;
}

uint32_t hearth_plan_sequence_flags(const hearth_plan* plan, size_t index) {
  if (plan == nullptr || plan->plan == nullptr || index >= plan->plan->sequences.size()) {
    return 0;
  }
  return SequenceFlags(plan->plan->sequences[index]);
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
    if (raw < HEARTH_PLAN_PREEMPTED || raw > HEARTH_PLAN_ENCODER_FREES) {
      return Fail(error, HEARTH_INVALID_ARGUMENT,
                  absl::StrCat("hearth_plan_entry_at: list ", raw,
                               " is not one of PREEMPTED .. ENCODER_FREES "
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

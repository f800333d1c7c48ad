// The batched C ABI (hearth_plan_get_arrays, hearth_outcome_add_arrays)
// against the per-entry calls it replaces: on a workload that swaps,
// copies on write, preempts and releases, every column says what
// hearth_plan_sequence and hearth_plan_entry_at say, the flattened block
// diffs rebuild every engine-side table exactly, and an outcome built from
// arrays completes like one built entry by entry.

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hearth/c/hearth.h"
#include "tests/capi/error_slot.h"

namespace {

using hearth::capi_test::Error;

hearth_scheduler* Make(const char* json) {
  hearth_options* o = nullptr;
  Error e;
  REQUIRE(hearth_options_from_json(json, &o, &e) == HEARTH_OK);
  hearth_scheduler* s = nullptr;
  REQUIRE(hearth_scheduler_create(o, &s, &e) == HEARTH_OK);
  hearth_options_free(o);
  return s;
}

// Tight memory, swap preemption and shared prompts: every list of a plan
// shows up within a few hundred steps.
constexpr const char* kTight =
    "{\"kv\": {\"num_device_blocks\": 40, \"num_host_blocks\": 64}, \"preemption_mode\": "
    "\"swap\", \"metrics\": {\"enabled\": false}}";

// Requests [first, first + 6): the later ones find the shared prompt cached.
void SubmitWorkload(hearth_scheduler* s, int first, std::vector<uint64_t>* ids) {
  Error e;
  std::vector<int32_t> prompt(32);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(i + 3);
  for (int r = first; r < first + 6; ++r) {
    hearth_request q = hearth_request_default();
    // Half share one 32-token prompt (two full blocks: copy on write when
    // they decode into the shared last block), half have their own.
    if (r % 2 == 1) prompt[0] = 100 + r;
    q.prompt_token_ids = prompt.data();
    q.num_prompt_token_ids = prompt.size();
    q.max_new_tokens = 60 + 7 * r;
    q.handle = 1000 + static_cast<uint64_t>(r);
    uint64_t id = 0;
    REQUIRE(hearth_scheduler_submit(s, &q, &id, &e) == HEARTH_OK);
    ids->push_back(id);
    prompt[0] = 3;
  }
}

void CheckSequences(const hearth_plan* plan, const hearth_plan_arrays& a,
                    std::map<uint64_t, std::vector<uint32_t>>& tables) {
  Error e;
  REQUIRE(a.num_sequences == hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES));
  CHECK(a.step == hearth_plan_step(plan));
  CHECK(a.num_batched_tokens == hearth_plan_num_batched_tokens(plan));
  int32_t decodes = 0;
  for (size_t i = 0; i < a.num_sequences; ++i) {
    hearth_sequence s;
    REQUIRE(hearth_plan_sequence(plan, i, &s, &e) == HEARTH_OK);
    CHECK(a.id[i] == s.id);
    CHECK(a.handle[i] == s.handle);
    CHECK(a.model[i] == s.model);
    CHECK(a.start_position[i] == s.start_position);
    CHECK(a.num_tokens[i] == s.num_tokens);
    CHECK(a.draft_tokens[i] == hearth_plan_sequence_draft_tokens(plan, i));
    CHECK(((a.flags[i] & HEARTH_SEQUENCE_SAMPLE) != 0) == (s.sample != 0));
    CHECK(((a.flags[i] & HEARTH_SEQUENCE_DECODE) != 0) == (s.decode != 0));
    CHECK(((a.flags[i] & HEARTH_SEQUENCE_FULL_BLOCK_TABLE) != 0) == (s.full_block_table != 0));
    CHECK(((a.flags[i] & HEARTH_SEQUENCE_INPUT_PENDING) != 0) ==
          (hearth_plan_sequence_input_pending(plan, i) != 0));
    decodes += s.decode;
    // The whole table is the plan's own array, not a copy.
    CHECK(a.block_table[i] == s.block_table);
    CHECK(a.num_block_table[i] == s.num_block_table);
    // An engine that applies only the flattened diffs holds the same table.
    std::vector<uint32_t>& held = tables[s.handle];
    if (s.full_block_table) held.clear();
    held.insert(held.end(), a.blocks + a.block_offset[i], a.blocks + a.block_offset[i + 1]);
    CHECK(held == std::vector<uint32_t>(s.block_table, s.block_table + s.num_block_table));
    const std::vector<int32_t> tokens(a.token_ids + a.token_offset[i],
                                      a.token_ids + a.token_offset[i + 1]);
    CHECK(tokens == std::vector<int32_t>(s.token_ids, s.token_ids + s.num_token_ids));
  }
  CHECK(a.num_decodes == decodes);
}

// Each list's array against hearth_plan_entry_at; how many entries it had.
size_t CheckList(const hearth_plan* plan, hearth_plan_list list, size_t count,
                 const hearth_plan_entry* entries) {
  Error e;
  REQUIRE(count == hearth_plan_count(plan, list));
  for (size_t i = 0; i < count; ++i) {
    hearth_plan_entry x;
    REQUIRE(hearth_plan_entry_at(plan, list, i, &x, &e) == HEARTH_OK);
    CHECK(entries[i].id == x.id);
    CHECK(entries[i].kind == x.kind);
    CHECK(entries[i].source == x.source);
    CHECK(entries[i].target == x.target);
    CHECK(entries[i].handle == x.handle);
  }
  return count;
}

}  // namespace

TEST_CASE("C API: plan arrays say what the per-entry calls say, on every list",
          "[capi]") {
  hearth_scheduler* s = Make(kTight);
  std::vector<uint64_t> ids;
  SubmitWorkload(s, 0, &ids);
  hearth_outcome* outcome = nullptr;
  Error e;
  REQUIRE(hearth_outcome_new(&outcome, &e) == HEARTH_OK);
  std::map<uint64_t, std::vector<uint32_t>> tables;
  size_t seen[7] = {};
  size_t ended = 0;
  std::vector<int32_t> tokens;
  for (int step = 0; step < 3000 && ended < ids.size(); ++step) {
    if (step == 5) SubmitWorkload(s, 6, &ids);
    if (step == 40) {
      REQUIRE(hearth_scheduler_cancel(s, ids[3], &e) == HEARTH_OK);
    }
    const hearth_plan* plan = nullptr;
    REQUIRE(hearth_scheduler_plan(s, 0.02 * step, &plan, &e) == HEARTH_OK);
    hearth_plan_arrays a;
    REQUIRE(hearth_plan_get_arrays(plan, &a, sizeof(a), &e) == HEARTH_OK);
    // A second call is the same arrays.
    hearth_plan_arrays again;
    REQUIRE(hearth_plan_get_arrays(plan, &again, sizeof(again), &e) == HEARTH_OK);
    CHECK(again.id == a.id);
    CheckSequences(plan, a, tables);
    seen[HEARTH_PLAN_PREEMPTED] +=
        CheckList(plan, HEARTH_PLAN_PREEMPTED, a.num_preempted, a.preempted);
    seen[HEARTH_PLAN_RELEASED] +=
        CheckList(plan, HEARTH_PLAN_RELEASED, a.num_released, a.released);
    seen[HEARTH_PLAN_SWAP_OUT] +=
        CheckList(plan, HEARTH_PLAN_SWAP_OUT, a.num_swap_out, a.swap_out);
    seen[HEARTH_PLAN_SWAP_IN] += CheckList(plan, HEARTH_PLAN_SWAP_IN, a.num_swap_in, a.swap_in);
    seen[HEARTH_PLAN_COPY_ON_WRITE] +=
        CheckList(plan, HEARTH_PLAN_COPY_ON_WRITE, a.num_copy_on_write, a.copy_on_write);
    CheckList(plan, HEARTH_PLAN_MODEL_COMMANDS, a.num_model_commands, a.model_commands);
    for (size_t i = 0; i < a.num_preempted; ++i) {
      if (a.preempted[i].kind == 0) tables.erase(a.preempted[i].handle);
    }
    for (size_t i = 0; i < a.num_released; ++i) tables.erase(a.released[i].handle);
    // The outcome from arrays: ids and produced from the plan on even
    // steps, explicit on odd ones; a token derived from the position.
    REQUIRE(hearth_outcome_begin(outcome, plan, &e) == HEARTH_OK);
    tokens.assign(a.num_sequences, 0);
    std::vector<uint8_t> produced(a.num_sequences);
    for (size_t i = 0; i < a.num_sequences; ++i) {
      tokens[i] = 5 + (a.start_position[i] + a.num_tokens[i]) % 50;
      produced[i] = (a.flags[i] & HEARTH_SEQUENCE_SAMPLE) != 0;
    }
    if (step % 2 == 0) {
      REQUIRE(hearth_outcome_add_arrays(outcome, a.num_sequences, nullptr, nullptr,
                                        tokens.data(), nullptr, &e) == HEARTH_OK);
    } else {
      REQUIRE(hearth_outcome_add_arrays(outcome, a.num_sequences, a.id, produced.data(),
                                        tokens.data(), nullptr, &e) == HEARTH_OK);
    }
    REQUIRE(hearth_scheduler_complete(s, outcome, &e) == HEARTH_OK);
    hearth_results* results = nullptr;
    REQUIRE(hearth_scheduler_drain(s, &results, &e) == HEARTH_OK);
    ended += hearth_results_count(results);
    hearth_results_free(results);
    // A completed plan's arrays are gone.
    CHECK(hearth_plan_get_arrays(plan, &a, sizeof(a), &e) == HEARTH_FAILED_PRECONDITION);
  }
  CHECK(ended == ids.size());
  CHECK(seen[HEARTH_PLAN_PREEMPTED] > 0);
  CHECK(seen[HEARTH_PLAN_RELEASED] > 0);
  CHECK(seen[HEARTH_PLAN_SWAP_OUT] > 0);
  CHECK(seen[HEARTH_PLAN_SWAP_IN] > 0);
  CHECK(seen[HEARTH_PLAN_COPY_ON_WRITE] > 0);
  hearth_outcome_free(outcome);
  hearth_scheduler_free(s);
}

TEST_CASE("C API: a refused array outcome leaves the outcome as it was", "[capi]") {
  hearth_scheduler* s = Make("{\"kv\": {\"num_device_blocks\": 64}}");
  Error e;
  for (int r = 0; r < 3; ++r) {
    hearth_request q = hearth_request_default();
    q.prompt_tokens = 8;
    q.max_new_tokens = 4;
    uint64_t id = 0;
    REQUIRE(hearth_scheduler_submit(s, &q, &id, &e) == HEARTH_OK);
  }
  hearth_outcome* outcome = nullptr;
  REQUIRE(hearth_outcome_new(&outcome, &e) == HEARTH_OK);
  const int32_t tokens[3] = {7, 7, 7};
  const uint8_t finish_bad[3] = {0, 3, 0};  // LENGTH is the scheduler's
  CHECK(hearth_outcome_add_arrays(outcome, 1, nullptr, nullptr, tokens, nullptr, &e) ==
        HEARTH_FAILED_PRECONDITION);  // not begun
  const hearth_plan* plan = nullptr;
  REQUIRE(hearth_scheduler_plan(s, 0, &plan, &e) == HEARTH_OK);
  REQUIRE(hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES) == 3);
  hearth_plan_arrays a;
  CHECK(hearth_plan_get_arrays(plan, &a, 4, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(e.message(), Catch::Contains("sizeof(hearth_plan_arrays)"));
  CHECK(hearth_plan_get_arrays(nullptr, &a, sizeof(a), &e) == HEARTH_INVALID_ARGUMENT);
  // A caller compiled with a shorter struct gets only its fields.
  hearth_plan_arrays partial;
  partial.num_model_commands = 12345;
  REQUIRE(hearth_plan_get_arrays(plan, &partial, offsetof(hearth_plan_arrays, num_preempted),
                                 &e) == HEARTH_OK);
  CHECK(partial.num_sequences == 3);
  CHECK(partial.num_model_commands == 12345);
  REQUIRE(hearth_plan_get_arrays(plan, &a, sizeof(a), &e) == HEARTH_OK);
  REQUIRE(hearth_outcome_begin(outcome, plan, &e) == HEARTH_OK);
  CHECK(hearth_outcome_add_arrays(outcome, 3, nullptr, nullptr, tokens, finish_bad, &e) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(e.message(), Catch::Contains("finish[1] is 3"));
  CHECK(hearth_outcome_add_arrays(outcome, 3, nullptr, nullptr, nullptr, nullptr, &e) ==
        HEARTH_INVALID_ARGUMENT);  // tokens produced, but none given
  CHECK(hearth_outcome_add_arrays(outcome, 3, a.id, nullptr, tokens, nullptr, &e) ==
        HEARTH_INVALID_ARGUMENT);  // produced NULL needs ids NULL
  CHECK(hearth_outcome_add_arrays(outcome, 4, nullptr, nullptr, tokens, nullptr, &e) ==
        HEARTH_OUT_OF_RANGE);
  CHECK(hearth_outcome_add_arrays(nullptr, 1, nullptr, nullptr, tokens, nullptr, &e) ==
        HEARTH_INVALID_ARGUMENT);
  // Nothing was appended: two entries then one more complete the plan.
  REQUIRE(hearth_outcome_add_arrays(outcome, 2, nullptr, nullptr, tokens, nullptr, &e) ==
          HEARTH_OK);
  CHECK(hearth_outcome_add_arrays(outcome, 2, nullptr, nullptr, tokens, nullptr, &e) ==
        HEARTH_OUT_OF_RANGE);
  REQUIRE(hearth_outcome_add_arrays(outcome, 1, nullptr, nullptr, tokens, nullptr, &e) ==
          HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(s, outcome, &e) == HEARTH_OK);
  // The outcome still names the completed plan's step: no NULL ids now.
  CHECK(hearth_outcome_add_arrays(outcome, 1, nullptr, nullptr, tokens, nullptr, &e) ==
        HEARTH_FAILED_PRECONDITION);
  hearth_outcome_free(outcome);
  hearth_scheduler_free(s);
}

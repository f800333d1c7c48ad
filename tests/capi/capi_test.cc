// The C API under hostile input: NULL handles, out-of-range and NaN values,
// bad JSON, huge strings and wrong call order all come back as error codes
// with messages, never crashes (this runs under ASan + UBSan in CI). The
// C11 host in c/full_loop.c and the consumers beside it cover the happy path
// from C, Python and Go. Enum arguments out of their enum's range are
// checked from C (c/full_loop.c): C allows them, while in C++ the call site
// itself would be undefined.

#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "hearth/c/hearth.h"
#include "tests/capi/error_slot.h"

namespace {

using hearth::capi_test::Error;

struct Scheduler {
  hearth_scheduler* s = nullptr;
  explicit Scheduler(const char* json = "{\"kv\": {\"num_device_blocks\": 64}}") {
    hearth_options* o = nullptr;
    REQUIRE(hearth_options_from_json(json, &o, nullptr) == HEARTH_OK);
    REQUIRE(hearth_scheduler_create(o, &s, nullptr) == HEARTH_OK);
    hearth_options_free(o);
  }
  ~Scheduler() { hearth_scheduler_free(s); }
};

hearth_request Request(int32_t prompt, int32_t max_new) {
  hearth_request r = hearth_request_default();
  r.prompt_tokens = prompt;
  r.max_new_tokens = max_new;
  return r;
}

hearth_status OptionsStatus(const std::string& json, std::string* message) {
  hearth_options* o = nullptr;
  Error e;
  hearth_status status = hearth_options_from_json(json.c_str(), &o, &e);
  if (status == HEARTH_OK) {
    hearth_scheduler* s = nullptr;
    status = hearth_scheduler_create(o, &s, &e);
    hearth_scheduler_free(s);
  }
  hearth_options_free(o);
  *message = e.message();
  return status;
}

}  // namespace

TEST_CASE("C API: NULL handles and out-parameters are errors", "[capi]") {
  Error e;
  hearth_request r = Request(8, 8);
  uint64_t id = 0;
  CHECK(hearth_options_new(nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(e.message() == "hearth_options_new: out is NULL");
  CHECK(hearth_options_from_json(nullptr, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_set_kv_blocks(nullptr, 16, 1, 0, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_set_batch_limits(nullptr, 1, 1, 0, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_set_policy(nullptr, "fifo", &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_add_user(nullptr, "a", 1, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_add_work_class(nullptr, "a", 0, 0, 1, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_use_household_classes(nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_set_context_length(nullptr, 8, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_create(nullptr, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_submit(nullptr, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_cancel(nullptr, 1, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_plan(nullptr, 1.0, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_complete(nullptr, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_drain(nullptr, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_stats(nullptr, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_metrics(nullptr, nullptr, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_prometheus_text(nullptr, 0, nullptr, nullptr, nullptr, &e) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_new(nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_begin(nullptr, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_add(nullptr, 1, 1, 0, HEARTH_FINISH_NONE, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_add_failed(nullptr, 1, "x", &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_add_failed_load(nullptr, 0, "x", &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_fill_from_plan(nullptr, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_set_completed_at(nullptr, 1.0, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_plan_sequence(nullptr, 0, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_plan_entry_at(nullptr, HEARTH_PLAN_RELEASED, 0, nullptr, &e) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_results_get(nullptr, 0, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_plan_step(nullptr) == 0);
  CHECK(hearth_plan_num_batched_tokens(nullptr) == 0);
  CHECK(hearth_plan_count(nullptr, HEARTH_PLAN_SEQUENCES) == 0);
  CHECK(hearth_results_count(nullptr) == 0);
  CHECK(hearth_error_code(nullptr) == HEARTH_INVALID_ARGUMENT);
  CHECK(std::string(hearth_error_message(nullptr)).empty());
  hearth_options_free(nullptr);
  hearth_scheduler_free(nullptr);
  hearth_outcome_free(nullptr);
  hearth_results_free(nullptr);
  hearth_error_free(nullptr);
  hearth_string_free(nullptr);
  // Without an error slot only the code comes back.
  CHECK(hearth_scheduler_cancel(nullptr, 1, nullptr) == HEARTH_INVALID_ARGUMENT);
}

TEST_CASE("C API: bad options JSON names the key and what is allowed", "[capi]") {
  std::string m;
  CHECK(OptionsStatus("{\"kv\": {\"num_blocks\": 4}}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("unknown key \"kv.num_blocks\"") &&
                    Catch::Contains("num_device_blocks"));
  CHECK(OptionsStatus("{\"bogus\": 1}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("\"bogus\""));
  CHECK(OptionsStatus("{\"users\": [{\"name\": \"a\", \"wieght\": 2}]}", &m) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("users[0].wieght"));
  CHECK(OptionsStatus("{\"kv\": {\"num_device_blocks\": 1e300}}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK(OptionsStatus("{\"kv\": {\"num_device_blocks\": 4294967296}}", &m) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("kv.num_device_blocks"));
  CHECK(OptionsStatus("{\"kv\": {\"num_device_blocks\": -5}}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("num_device_blocks"));
  CHECK(OptionsStatus("{\"max_running\": \"many\"}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK(OptionsStatus("{\"users\": [{\"weight\": 0}]}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK(OptionsStatus("{\"policy\": \"lottery\"}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("fifo"));
  CHECK(OptionsStatus("{\"work_classes\": \"office\"}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK(OptionsStatus("{\"max_arrival_lead_s\": \"soon\"}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK(OptionsStatus("[1, 2]", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK(OptionsStatus("", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK(OptionsStatus("{\"kv\": ", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK(OptionsStatus(std::string(100000, '[') + std::string(100000, ']'), &m) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("nested"));
  const std::string huge_key(1 << 20, 'k');
  CHECK(OptionsStatus("{\"" + huge_key + "\": 1}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK(m.size() < 2000);  // the key is quoted shortened
  CHECK(OptionsStatus(std::string("{\"policy\": \"fifo\"}\0junk", 22), &m) == HEARTH_OK);
  CHECK(OptionsStatus("{\"work_classes\": \"household\", \"policy\": \"vtc\", "
                      "\"preemption_mode\": \"swap\", \"kv\": {\"num_host_blocks\": 64},"
                      " \"vtc\": {\"decode_token_weight\": 1}, "
                      "\"metrics\": {\"max_gap_users\": 4}}", &m) == HEARTH_OK);
}

TEST_CASE("C API: every policy's settings reach the policy", "[capi]") {
  // A bad value reaching the policy's own validation proves the key was read
  // into the field it names; a good one is accepted.
  std::string m;
  CHECK(OptionsStatus("{\"policy\": \"mlfq\", \"mlfq\": {\"num_levels\": 0}}", &m) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("num_levels"));
  CHECK(OptionsStatus("{\"policy\": \"mlfq\", \"mlfq\": {\"num_levels\": 4, "
                      "\"base_quantum\": 16, \"prefill_token_cost\": 0.5, "
                      "\"decode_token_cost\": 2, \"starvation_bound_s\": null, "
                      "\"max_preemptions_per_step\": 2}}", &m) == HEARTH_OK);
  CHECK(OptionsStatus("{\"policy\": \"priority\", \"priority\": {\"quotas\": "
                      "[{\"priority\": 1}]}}", &m) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("quota"));
  CHECK(OptionsStatus("{\"policy\": \"priority\", \"priority\": {\"aging_interval_s\": 5, "
                      "\"quota_window_s\": 20, \"quotas\": [{\"priority\": 1, "
                      "\"max_share\": 0.5}]}}", &m) == HEARTH_OK);
  CHECK(OptionsStatus("{\"priority\": {\"quotas\": {\"priority\": 1}}}", &m) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("priority.quotas"));
  CHECK(OptionsStatus("{\"priority\": {\"quotas\": [{\"level\": 1}]}}", &m) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("priority.quotas[0].level"));
  // The household tree reads MLFQ's settings when its request level is MLFQ.
  CHECK(OptionsStatus("{\"policy\": \"household\", \"household\": {\"request_level\": "
                      "\"mlfq\"}, \"mlfq\": {\"base_quantum\": -1}}", &m) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("base_quantum"));
  CHECK(OptionsStatus("{\"household\": {\"request_level\": \"lifo\"}}", &m) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("household.request_level"));
  CHECK(OptionsStatus("{\"policy\": \"vtc\", \"workflow_head_start_s\": -1}", &m) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(m, Catch::Contains("workflow_head_start"));
}

TEST_CASE("C API: setters store and create validates", "[capi]") {
  Error e;
  hearth_options* o = nullptr;
  REQUIRE(hearth_options_new(&o, &e) == HEARTH_OK);
  CHECK(hearth_options_set_policy(o, "lottery", &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_set_policy(o, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_add_work_class(o, "x", 0, 0, NAN, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_add_user(o, "a", NAN, &e) == HEARTH_OK);
  hearth_scheduler* s = nullptr;
  CHECK(hearth_scheduler_create(o, &s, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(s == nullptr);
  CHECK_THAT(e.message(), Catch::Contains("weight"));
  REQUIRE(hearth_options_add_user(o, "b", 1, &e) == HEARTH_OK);  // appends
  hearth_options_free(o);
  REQUIRE(hearth_options_new(&o, &e) == HEARTH_OK);
  CHECK(hearth_options_set_kv_blocks(o, 16, INT_MAX, 0, &e) == HEARTH_OK);
  CHECK(hearth_scheduler_create(o, &s, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_set_kv_blocks(o, -1, 64, -1, &e) == HEARTH_OK);
  CHECK(hearth_scheduler_create(o, &s, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_set_kv_blocks(o, 16, 64, 0, &e) == HEARTH_OK);
  CHECK(hearth_options_set_batch_limits(o, INT_MIN, 0, -1, &e) == HEARTH_OK);
  CHECK(hearth_scheduler_create(o, &s, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_set_batch_limits(o, 512, 8, 0, &e) == HEARTH_OK);
  CHECK(hearth_options_use_household_classes(o, &e) == HEARTH_OK);
  CHECK(hearth_options_set_policy(o, "mlfq", &e) == HEARTH_OK);
  REQUIRE(hearth_scheduler_create(o, &s, &e) == HEARTH_OK);
  hearth_scheduler_free(s);
  hearth_options_free(o);
}

TEST_CASE("C API: hostile requests are refused", "[capi]") {
  Scheduler s;
  Error e;
  uint64_t id = 0;
  hearth_request r = Request(INT_MAX, INT_MAX);
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  r = Request(-1, 8);
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  r = Request(8, 0);
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  for (double bad : {double{NAN}, double{INFINITY}, 1e300, -1e300}) {
    r = Request(8, 8);
    r.arrival_time_s = bad;
    CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
    CHECK_THAT(e.message(), Catch::Contains("arrival_time_s"));
    r = Request(8, 8);
    r.deadline_s = bad == INFINITY ? -INFINITY : bad;
    CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  }
  r = Request(8, 8);
  r.num_prompt_token_ids = 8;  // and no pointer
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  const std::vector<int32_t> ids(5, 1);
  r.prompt_token_ids = ids.data();
  r.num_prompt_token_ids = ids.size();  // 5 ids for 8 tokens
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  r.num_prompt_token_ids = SIZE_MAX;
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  const std::string huge(1 << 20, 'x');
  r = Request(8, 8);
  r.label = huge.c_str();
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(e.message(), Catch::Contains("label"));
  r = Request(8, 8);
  r.user = huge.c_str();
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) != HEARTH_OK);
  r.user = "nobody";
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_NOT_FOUND);
  r = Request(8, 8);
  r.parent = 12345;
  CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_cancel(s.s, HEARTH_NO_REQUEST, &e) == HEARTH_NOT_FOUND);
  r = Request(8, 8);
  CHECK(hearth_scheduler_submit(s.s, &r, nullptr, &e) == HEARTH_INVALID_ARGUMENT);
  REQUIRE(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_OK);
}

TEST_CASE("C API: call order, stale plans and bad outcomes", "[capi]") {
  Scheduler s;
  Error e;
  uint64_t id = 0;
  hearth_request r = Request(40, 3);
  REQUIRE(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_OK);
  const hearth_plan* plan = nullptr;
  for (double bad : {double{NAN}, double{INFINITY}, -double{INFINITY}, 1e13}) {
    CHECK(hearth_scheduler_plan(s.s, bad, &plan, &e) == HEARTH_INVALID_ARGUMENT);
  }
  hearth_outcome* o = nullptr;
  REQUIRE(hearth_outcome_new(&o, &e) == HEARTH_OK);
  CHECK(hearth_scheduler_complete(s.s, o, &e) == HEARTH_FAILED_PRECONDITION);
  CHECK(hearth_outcome_add(o, id, 1, 0, HEARTH_FINISH_NONE, &e) == HEARTH_FAILED_PRECONDITION);
  REQUIRE(hearth_scheduler_plan(s.s, 10.0, &plan, &e) == HEARTH_OK);
  const hearth_plan* again = nullptr;
  CHECK(hearth_scheduler_plan(s.s, 11.0, &again, &e) == HEARTH_FAILED_PRECONDITION);
  REQUIRE(hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES) == 1);
  hearth_sequence seq;
  CHECK(hearth_plan_sequence(plan, 1, &seq, &e) == HEARTH_OUT_OF_RANGE);
  CHECK(hearth_plan_sequence(plan, SIZE_MAX, &seq, &e) == HEARTH_OUT_OF_RANGE);
  hearth_plan_entry entry;
  CHECK(hearth_plan_entry_at(plan, HEARTH_PLAN_RELEASED, 0, &entry, &e) == HEARTH_OUT_OF_RANGE);
  CHECK(hearth_plan_entry_at(plan, HEARTH_PLAN_SEQUENCES, 0, &entry, &e) ==
        HEARTH_INVALID_ARGUMENT);
  REQUIRE(hearth_plan_sequence(plan, 0, &seq, &e) == HEARTH_OK);
  CHECK(seq.num_tokens == 40);
  CHECK(seq.full_block_table == 1);
  CHECK(seq.num_block_table == 3);  // 40 tokens, 16 per block

  // A wrong outcome applies nothing and leaves the plan outstanding.
  REQUIRE(hearth_outcome_begin(o, plan, &e) == HEARTH_OK);
  CHECK(hearth_outcome_add(o, id, 1, 0, HEARTH_FINISH_LENGTH, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_add(o, id + 1, 1, 0, HEARTH_FINISH_NONE, &e) == HEARTH_OK);
  CHECK(hearth_scheduler_complete(s.s, o, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_set_completed_at(o, NAN, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_set_completed_at(o, 5.0, &e) == HEARTH_OK);  // before the plan
  REQUIRE(hearth_outcome_fill_from_plan(o, plan, &e) == HEARTH_OK);
  CHECK(hearth_outcome_set_completed_at(o, 5.0, &e) == HEARTH_OK);
  CHECK(hearth_scheduler_complete(s.s, o, &e) == HEARTH_INVALID_ARGUMENT);
  REQUIRE(hearth_outcome_fill_from_plan(o, plan, &e) == HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(s.s, o, &e) == HEARTH_OK);
  // The completed plan's view is empty, not dangling.
  CHECK(hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES) == 0);
  CHECK(hearth_plan_step(plan) == 0);
  CHECK(hearth_outcome_begin(o, plan, &e) == HEARTH_FAILED_PRECONDITION);
  CHECK(hearth_scheduler_plan(s.s, 9.0, &plan, &e) == HEARTH_INVALID_ARGUMENT);  // backwards

  // Run it out: every request ends exactly once, with the failure's message.
  int ended = 0;
  for (int step = 0; step < 20 && ended == 0; ++step) {
    REQUIRE(hearth_scheduler_plan(s.s, 11.0 + step, &plan, &e) == HEARTH_OK);
    REQUIRE(hearth_outcome_begin(o, plan, &e) == HEARTH_OK);
    for (size_t i = 0; i < hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES); ++i) {
      REQUIRE(hearth_plan_sequence(plan, i, &seq, &e) == HEARTH_OK);
      REQUIRE(hearth_outcome_add_failed(o, seq.id, nullptr, &e) == HEARTH_OK);
    }
    REQUIRE(hearth_scheduler_complete(s.s, o, &e) == HEARTH_OK);
    hearth_results* results = nullptr;
    REQUIRE(hearth_scheduler_drain(s.s, &results, &e) == HEARTH_OK);
    for (size_t i = 0; i < hearth_results_count(results); ++i) {
      hearth_result result;
      REQUIRE(hearth_results_get(results, i, &result, &e) == HEARTH_OK);
      CHECK(result.phase == HEARTH_PHASE_FAILED);
      CHECK_THAT(result.message, Catch::Contains("engine failure"));
      CHECK(std::isfinite(result.end_time_s));
      ++ended;
    }
    hearth_result result;
    CHECK(hearth_results_get(results, 99, &result, &e) == HEARTH_OUT_OF_RANGE);
    hearth_results_free(results);
  }
  CHECK(ended == 1);
  hearth_metrics m;
  CHECK(hearth_scheduler_metrics(s.s, "user:nobody", &m, &e) == HEARTH_NOT_FOUND);
  CHECK(hearth_scheduler_metrics(s.s, "", &m, &e) == HEARTH_NOT_FOUND);
  REQUIRE(hearth_scheduler_metrics(s.s, "class:default", &m, &e) == HEARTH_OK);
  CHECK(m.failed == 1);
  char* text = nullptr;
  REQUIRE(hearth_scheduler_prometheus_text(s.s, 0, nullptr, &text, nullptr, &e) == HEARTH_OK);
  CHECK_THAT(text, Catch::Contains("outcome=\"failed\"} 1"));
  hearth_string_free(text);
  hearth_outcome_free(o);
}

TEST_CASE("C API: an error slot is replaced, not leaked", "[capi]") {
  Error e;
  hearth_options* o = nullptr;
  CHECK(hearth_options_from_json("{\"a\": 1}", &o, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_from_json("{\"b\": 1}", &o, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(e.message(), Catch::Contains("\"b\""));
  CHECK(hearth_error_code(e.error) == HEARTH_INVALID_ARGUMENT);
  // Success leaves the slot as it was.
  REQUIRE(hearth_options_new(&o, &e) == HEARTH_OK);
  CHECK_THAT(e.message(), Catch::Contains("\"b\""));
  hearth_options_free(o);
  CHECK(std::string(hearth_version()) == HEARTH_VERSION_STRING);
}

TEST_CASE("C API: SLO targets per class (JSON) and per request, validated", "[capi][slo]") {
  std::string m;
  const std::string classes =
      "{\"work_classes\": [{\"name\": \"voice\", \"ttft_slo_s\": 0.05, \"tpot_slo_s\": 0.02},"
      " {\"name\": \"chat\", \"ttft_slo_s\": null}]";
  CHECK(OptionsStatus(classes + "}", &m) == HEARTH_OK);
  for (const char* bad : {"0", "-1", "1e9", "\"soon\"", "1e300"}) {
    CAPTURE(bad);
    CHECK(OptionsStatus(std::string("{\"work_classes\": [{\"name\": \"v\", \"tpot_slo_s\": ") +
                            bad + "}]}",
                        &m) == HEARTH_INVALID_ARGUMENT);
    CHECK_THAT(m, Catch::Contains("tpot_slo"));
  }

  Scheduler s((classes + ", \"policy\": \"fifo\", \"kv\": {\"num_device_blocks\": 64}}").c_str());
  Error e;
  uint64_t id = 0;
  for (double bad : {double{NAN}, -1.0, -double{INFINITY}, 1e300, 1e9}) {
    CAPTURE(bad);
    hearth_request r = Request(8, 4);
    r.ttft_slo_s = bad;
    CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
    CHECK_THAT(e.message(), Catch::Contains("ttft_slo"));
    r = Request(8, 4);
    r.tpot_slo_s = bad;
    CHECK(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_INVALID_ARGUMENT);
    CHECK_THAT(e.message(), Catch::Contains("tpot_slo"));
  }
  // Voice's own 50 ms; chat with a 1 ns target of its own, which its first
  // token (a plan later) must miss; voice with TTFT opted out.
  hearth_request voice = Request(8, 2);
  voice.work_class = "voice";
  REQUIRE(hearth_scheduler_submit(s.s, &voice, &id, &e) == HEARTH_OK);
  hearth_request chat = Request(8, 2);
  chat.work_class = "chat";
  chat.ttft_slo_s = 1e-9;
  chat.arrival_time_s = 0.0;
  REQUIRE(hearth_scheduler_submit(s.s, &chat, &id, &e) == HEARTH_OK);
  hearth_request none = Request(8, 2);
  none.work_class = "voice";
  none.ttft_slo_s = INFINITY;
  REQUIRE(hearth_scheduler_submit(s.s, &none, &id, &e) == HEARTH_OK);
  // Arrived a second before the first plan: misses voice's 50 ms.
  hearth_request late = Request(8, 2);
  late.work_class = "voice";
  late.arrival_time_s = 0.0;
  REQUIRE(hearth_scheduler_submit(s.s, &late, &id, &e) == HEARTH_OK);
  hearth_outcome* o = nullptr;
  REQUIRE(hearth_outcome_new(&o, &e) == HEARTH_OK);
  for (double now = 1.0; now < 1.1; now += 0.01) {
    const hearth_plan* plan = nullptr;
    REQUIRE(hearth_scheduler_plan(s.s, now, &plan, &e) == HEARTH_OK);
    REQUIRE(hearth_outcome_fill_from_plan(o, plan, &e) == HEARTH_OK);
    REQUIRE(hearth_scheduler_complete(s.s, o, &e) == HEARTH_OK);
  }
  hearth_outcome_free(o);
  char* text = nullptr;
  REQUIRE(hearth_scheduler_prometheus_text(s.s, 0, nullptr, &text, nullptr, &e) == HEARTH_OK);
  const std::string prom = text;
  hearth_string_free(text);
  // Voice: TTFT judged twice (the opted-out request is not), met once; TPOT
  // three times.
  CHECK_THAT(prom, Catch::Contains(
                       "hearth_slo_requests_total{class=\"voice\",kind=\"ttft\",met=\"true\"} 1\n"));
  CHECK_THAT(prom, Catch::Contains(
                       "hearth_slo_requests_total{class=\"voice\",kind=\"ttft\",met=\"false\"} 1\n"));
  CHECK_THAT(prom, Catch::Contains(
                       "hearth_slo_requests_total{class=\"voice\",kind=\"tpot\",met=\"true\"} 3\n"));
  INFO(prom);
  // Finished within every target of its class, the one set in the options
  // JSON (a request's own overrides do not move these): the late voice
  // request is the one that did not.
  CHECK_THAT(prom, Catch::Contains("hearth_slo_met_total{class=\"voice\"} 2\n"));
  // Chat has no class target; the request's own 1 ns one was missed.
  CHECK_THAT(prom, Catch::Contains(
                       "hearth_slo_requests_total{class=\"chat\",kind=\"ttft\",met=\"false\"} 1\n"));
  CHECK_THAT(prom, Catch::Contains(
                       "hearth_slo_requests_total{class=\"chat\",kind=\"tpot\",met=\"false\"} 0\n"));
}

namespace {

TEST_CASE("C API: handles, out of KV, cancel reasons and the idle wake-up", "[capi]") {
  Scheduler sch;
  CHECK(hearth_scheduler_next_event_time(sch.s) == INFINITY);
  CHECK(hearth_scheduler_wait_for_work(sch.s, 0.0) == 0);  // Idle, no sleep.
  hearth_request r = Request(8, 2);
  r.handle = 77;
  uint64_t a = 0, b = 0;
  REQUIRE(hearth_scheduler_submit(sch.s, &r, &a, nullptr) == HEARTH_OK);
  r.handle = 88;
  REQUIRE(hearth_scheduler_submit(sch.s, &r, &b, nullptr) == HEARTH_OK);
  CHECK(hearth_scheduler_next_event_time(sch.s) == -INFINITY);
  CHECK(hearth_scheduler_wait_for_work(sch.s, INFINITY) == 1);  // Work queued.

  const hearth_plan* plan = nullptr;
  REQUIRE(hearth_scheduler_plan(sch.s, 1.0, &plan, nullptr) == HEARTH_OK);
  REQUIRE(hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES) == 2);
  hearth_outcome* out = nullptr;
  REQUIRE(hearth_outcome_new(&out, nullptr) == HEARTH_OK);
  REQUIRE(hearth_outcome_begin(out, plan, nullptr) == HEARTH_OK);
  for (size_t i = 0; i < 2; ++i) {
    hearth_sequence seq;
    REQUIRE(hearth_plan_sequence(plan, i, &seq, nullptr) == HEARTH_OK);
    CHECK(seq.handle == (seq.id == a ? 77u : 88u));
    if (seq.id == b) {
      REQUIRE(hearth_outcome_add_out_of_kv(out, seq.id, nullptr) == HEARTH_OK);
    } else {
      REQUIRE(hearth_outcome_add(out, seq.id, seq.sample, 1, HEARTH_FINISH_NONE, nullptr) ==
              HEARTH_OK);
    }
  }
  REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_cancel_reason(sch.s, a, "hung up", nullptr) == HEARTH_OK);
  hearth_stats st;
  REQUIRE(hearth_scheduler_published_stats(sch.s, &st, nullptr) == HEARTH_OK);
  CHECK(st.preemptions == 1);
  CHECK(st.engine_out_of_kv_preemptions == 1);
  CHECK(st.retries == 0);

  REQUIRE(hearth_scheduler_plan(sch.s, 2.0, &plan, nullptr) == HEARTH_OK);
  hearth_plan_entry e;
  REQUIRE(hearth_plan_count(plan, HEARTH_PLAN_PREEMPTED) == 1);
  REQUIRE(hearth_plan_entry_at(plan, HEARTH_PLAN_PREEMPTED, 0, &e, nullptr) == HEARTH_OK);
  CHECK(e.id == b);
  CHECK(e.handle == 88);
  CHECK(e.source == 1);  // The engine's out-of-KV report.
  REQUIRE(hearth_plan_count(plan, HEARTH_PLAN_RELEASED) == 1);
  REQUIRE(hearth_plan_entry_at(plan, HEARTH_PLAN_RELEASED, 0, &e, nullptr) == HEARTH_OK);
  CHECK(e.handle == 77);
  REQUIRE(hearth_outcome_fill_from_plan(out, plan, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
  hearth_outcome_free(out);

  hearth_results* results = nullptr;
  REQUIRE(hearth_scheduler_drain(sch.s, &results, nullptr) == HEARTH_OK);
  REQUIRE(hearth_results_count(results) == 1);
  hearth_result res;
  REQUIRE(hearth_results_get(results, 0, &res, nullptr) == HEARTH_OK);
  CHECK(res.handle == 77);
  CHECK(res.phase == HEARTH_PHASE_CANCELLED);
  CHECK(std::string(res.message).rfind("hung up", 0) == 0);
  hearth_results_free(results);
  hearth_scheduler_wake(sch.s);
  CHECK(hearth_scheduler_wait_for_work(sch.s, INFINITY) == 1);  // Live work, or the wake.
}

TEST_CASE("C API: speculative decodes", "[capi]") {
  Scheduler sch("{\"kv\": {\"num_device_blocks\": 64}, \"max_draft_tokens\": 3}");
  hearth_request r = Request(8, 20);
  uint64_t id = 0;
  REQUIRE(hearth_scheduler_submit(sch.s, &r, &id, nullptr) == HEARTH_OK);
  const hearth_plan* plan = nullptr;
  hearth_outcome* out = nullptr;
  REQUIRE(hearth_outcome_new(&out, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_plan(sch.s, 1.0, &plan, nullptr) == HEARTH_OK);
  CHECK(hearth_plan_sequence_draft_tokens(plan, 0) == 0);  // The prefill.
  REQUIRE(hearth_outcome_fill_from_plan(out, plan, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_plan(sch.s, 2.0, &plan, nullptr) == HEARTH_OK);
  REQUIRE(hearth_plan_sequence_draft_tokens(plan, 0) == 3);
  CHECK(hearth_plan_sequence_draft_tokens(plan, 1) == 0);
  CHECK(hearth_plan_sequence_draft_tokens(nullptr, 0) == 0);
  REQUIRE(hearth_outcome_begin(out, plan, nullptr) == HEARTH_OK);
  const int32_t drafts[] = {5, 6};
  Error e;
  CHECK(hearth_outcome_add_speculative(out, id, nullptr, 2, 7, HEARTH_FINISH_NONE, &e) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_outcome_add_speculative(out, id, drafts, 9, 7, HEARTH_FINISH_NONE, nullptr) ==
        HEARTH_INVALID_ARGUMENT);
  REQUIRE(hearth_outcome_add_speculative(out, id, drafts, 2, 7, HEARTH_FINISH_NONE, nullptr) ==
          HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
  hearth_stats st;
  REQUIRE(hearth_scheduler_published_stats(sch.s, &st, nullptr) == HEARTH_OK);
  // The prefill's token, then two drafts and the token after them.
  REQUIRE(hearth_scheduler_plan(sch.s, 3.0, &plan, nullptr) == HEARTH_OK);
  hearth_sequence seq;
  REQUIRE(hearth_plan_sequence(plan, 0, &seq, nullptr) == HEARTH_OK);
  CHECK(seq.start_position == 8 + 3);
  REQUIRE(hearth_outcome_fill_from_plan(out, plan, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
  hearth_outcome_free(out);
  std::string message;
  CHECK(OptionsStatus("{\"max_draft_tokens\": 9}", &message) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("max_draft_tokens"));
}

TEST_CASE("C API: overlapped planning", "[capi]") {
  Scheduler sch("{\"kv\": {\"num_device_blocks\": 64}, \"overlap_planning\": true}");
  hearth_request r = Request(8, 20);
  r.handle = 41;
  uint64_t id = 0;
  REQUIRE(hearth_scheduler_submit(sch.s, &r, &id, nullptr) == HEARTH_OK);
  const hearth_plan* first = nullptr;
  const hearth_plan* second = nullptr;
  REQUIRE(hearth_scheduler_plan(sch.s, 1.0, &first, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_plan(sch.s, 2.0, &second, nullptr) == HEARTH_OK);
  const hearth_plan* third = nullptr;
  CHECK(hearth_scheduler_plan(sch.s, 3.0, &third, nullptr) == HEARTH_FAILED_PRECONDITION);
  // Both views stay readable: the prefill, then the decode of its token.
  CHECK(hearth_plan_step(first) + 1 == hearth_plan_step(second));
  CHECK(hearth_plan_sequence_input_pending(first, 0) == 0);
  REQUIRE(hearth_plan_sequence_input_pending(second, 0) == 1);
  CHECK(hearth_plan_sequence_input_pending(second, 1) == 0);
  CHECK(hearth_plan_sequence_input_pending(nullptr, 0) == 0);
  hearth_sequence seq;
  REQUIRE(hearth_plan_sequence(second, 0, &seq, nullptr) == HEARTH_OK);
  CHECK(seq.start_position == 8);
  CHECK(seq.num_token_ids == 0);
  // The prefill's token stops the request: the decode after it is voided.
  hearth_outcome* out = nullptr;
  REQUIRE(hearth_outcome_new(&out, nullptr) == HEARTH_OK);
  REQUIRE(hearth_outcome_begin(out, first, nullptr) == HEARTH_OK);
  REQUIRE(hearth_outcome_add(out, id, 1, 5, HEARTH_FINISH_STOP_TOKEN, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
  CHECK(hearth_plan_count(first, HEARTH_PLAN_SEQUENCES) == 0);  // a completed view reads empty
  REQUIRE(hearth_plan_count(second, HEARTH_PLAN_VOIDED) == 1);
  hearth_plan_entry e;
  REQUIRE(hearth_plan_entry_at(second, HEARTH_PLAN_VOIDED, 0, &e, nullptr) == HEARTH_OK);
  CHECK(e.id == id);
  CHECK(e.handle == 41);
  REQUIRE(hearth_outcome_fill_from_plan(out, second, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
  hearth_outcome_free(out);
  hearth_results* results = nullptr;
  REQUIRE(hearth_scheduler_drain(sch.s, &results, nullptr) == HEARTH_OK);
  REQUIRE(hearth_results_count(results) == 1);
  hearth_result res;
  REQUIRE(hearth_results_get(results, 0, &res, nullptr) == HEARTH_OK);
  CHECK(res.phase == HEARTH_PHASE_FINISHED);
  CHECK(res.output_tokens == 1);
  hearth_results_free(results);
  std::string message;
  CHECK(OptionsStatus("{\"overlap_planning\": 3}", &message) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("overlap_planning"));
}

TEST_CASE("C API: adapters in the options JSON", "[capi]") {
  const char* json =
      "{\"kv\": {\"num_device_blocks\": 64},"
      " \"models\": [{\"name\": \"llama\", \"kv_bytes_per_token\": 1000,"
      "                \"weights_bytes\": 500000},"
      "               {\"name\": \"alice-lora\", \"base_model\": \"llama\","
      "                \"weights_bytes\": 20000, \"preload\": false}],"
      " \"residency\": {\"device_memory_bytes\": 2000000, \"max_resident_adapters\": 1,"
      "               \"max_adapters_per_step\": 1}}";
  Scheduler sch(json);
  hearth_request r = Request(8, 2);
  r.model = "alice-lora";
  uint64_t id = 0;
  REQUIRE(hearth_scheduler_submit(sch.s, &r, &id, nullptr) == HEARTH_OK);
  const hearth_plan* plan = nullptr;
  REQUIRE(hearth_scheduler_plan(sch.s, 1.0, &plan, nullptr) == HEARTH_OK);
  REQUIRE(hearth_plan_count(plan, HEARTH_PLAN_MODEL_COMMANDS) == 1);
  hearth_plan_entry e;
  REQUIRE(hearth_plan_entry_at(plan, HEARTH_PLAN_MODEL_COMMANDS, 0, &e, nullptr) == HEARTH_OK);
  CHECK(e.kind == 0);  // load
  std::string message;
  CHECK(OptionsStatus("{\"models\": [{\"name\": \"a\", \"base_model\": \"b\"}]}", &message) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("base_model"));
}

TEST_CASE("C API: models added and removed at run time", "[capi][models]") {
  Scheduler sch(
      "{\"kv\": {\"num_device_blocks\": 64},"
      " \"models\": [{\"name\": \"llama\", \"kv_bytes_per_token\": 1000,"
      "                \"weights_bytes\": 500000}],"
      " \"residency\": {\"device_memory_bytes\": 2000000}}");
  uint32_t index = 99;
  CHECK(hearth_scheduler_add_model(nullptr, "{}", &index, nullptr) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_add_model(sch.s, nullptr, &index, nullptr) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_remove_model(nullptr, "llama", nullptr) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_remove_model(sch.s, nullptr, nullptr) == HEARTH_INVALID_ARGUMENT);
  struct Bad {
    std::string json;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {"", "model JSON"},
      {"[1, 2]", "must be an object"},
      {"{\"name\": \"x\", \"colour\": 3}", "colour"},
      {"{\"name\": \"x\", \"name\": \"y\"}", "appears twice"},
      {"{\"name\": \"llama\", \"kv_bytes_per_token\": 1000}", "llama"},
      {"{\"name\": \"x\", \"kv_bytes_per_token\": 1000, \"context_length\": -5}",
       "context_length"},
      {"{\"name\": \"x\", \"base_model\": \"nope\"}", "base_model"},
      {std::string(300, '['), "nested"},
  };
  for (const Bad& b : bad) {
    INFO(b.json.substr(0, 80));
    Error e;
    CHECK(hearth_scheduler_add_model(sch.s, b.json.c_str(), &index, &e) == HEARTH_INVALID_ARGUMENT);
    CHECK_THAT(e.message(), Catch::Contains(b.says));
  }
  CHECK(index == 99);  // nothing written on a refusal
  REQUIRE(hearth_scheduler_add_model(
              sch.s, "{\"name\": \"ana-lora\", \"base_model\": \"llama\", \"weights_bytes\": 20000}",
              &index, nullptr) == HEARTH_OK);
  CHECK(index == 1);
  hearth_request r = Request(8, 2);
  r.model = "ana-lora";
  uint64_t id = 0;
  REQUIRE(hearth_scheduler_submit(sch.s, &r, &id, nullptr) == HEARTH_OK);
  Error busy;
  CHECK(hearth_scheduler_remove_model(sch.s, "ana-lora", &busy) == HEARTH_FAILED_PRECONDITION);
  CHECK_THAT(busy.message(), Catch::Contains("not ended"));
  Error base;
  CHECK(hearth_scheduler_remove_model(sch.s, "llama", &base) == HEARTH_FAILED_PRECONDITION);
  CHECK_THAT(base.message(), Catch::Contains("ana-lora"));
  REQUIRE(hearth_scheduler_cancel(sch.s, id, nullptr) == HEARTH_OK);
  const hearth_plan* plan = nullptr;
  REQUIRE(hearth_scheduler_plan(sch.s, 1.0, &plan, nullptr) == HEARTH_OK);
  hearth_outcome* out = nullptr;
  REQUIRE(hearth_outcome_new(&out, nullptr) == HEARTH_OK);
  REQUIRE(hearth_outcome_fill_from_plan(out, plan, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
  CHECK(hearth_scheduler_remove_model(sch.s, "ana-lora", nullptr) == HEARTH_OK);
  Error gone;
  CHECK(hearth_scheduler_remove_model(sch.s, "ana-lora", &gone) == HEARTH_NOT_FOUND);
  CHECK(hearth_scheduler_submit(sch.s, &r, &id, nullptr) == HEARTH_NOT_FOUND);
  const std::string long_name(5000, 'a');
  CHECK(hearth_scheduler_remove_model(sch.s, long_name.c_str(), nullptr) == HEARTH_INVALID_ARGUMENT);
  hearth_outcome_free(out);
}

TEST_CASE("C API: live priority and class changes", "[capi]") {
  Scheduler sch("{\"kv\": {\"num_device_blocks\": 64}, \"work_classes\": \"household\"}");
  CHECK(hearth_scheduler_set_priority(nullptr, 1, 2, nullptr) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_set_work_class(nullptr, 1, "chat", nullptr) == HEARTH_INVALID_ARGUMENT);
  hearth_request r = Request(8, 2);
  r.work_class = "maintenance";
  uint64_t id = 0;
  REQUIRE(hearth_scheduler_submit(sch.s, &r, &id, nullptr) == HEARTH_OK);
  CHECK(hearth_scheduler_set_priority(sch.s, id, 3, nullptr) == HEARTH_OK);
  CHECK(hearth_scheduler_set_work_class(sch.s, id, "voice", nullptr) == HEARTH_OK);
  Error e;
  CHECK(hearth_scheduler_set_work_class(sch.s, id, "no such class", &e) == HEARTH_NOT_FOUND);
  CHECK_THAT(e.message(), Catch::Contains("voice"));
  CHECK(hearth_scheduler_set_priority(sch.s, id + 100, 3, nullptr) == HEARTH_NOT_FOUND);
  const hearth_plan* plan = nullptr;
  REQUIRE(hearth_scheduler_plan(sch.s, 1.0, &plan, nullptr) == HEARTH_OK);
  REQUIRE(hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES) == 1);
  hearth_outcome* out = nullptr;
  REQUIRE(hearth_outcome_new(&out, nullptr) == HEARTH_OK);
  REQUIRE(hearth_outcome_fill_from_plan(out, plan, nullptr) == HEARTH_OK);
  REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
  hearth_outcome_free(out);
  hearth_results* results = nullptr;
  while (true) {
    REQUIRE(hearth_scheduler_drain(sch.s, &results, nullptr) == HEARTH_OK);
    if (hearth_results_count(results) > 0) break;
    hearth_results_free(results);
    REQUIRE(hearth_scheduler_plan(sch.s, 2.0, &plan, nullptr) == HEARTH_OK);
    REQUIRE(hearth_outcome_new(&out, nullptr) == HEARTH_OK);
    REQUIRE(hearth_outcome_fill_from_plan(out, plan, nullptr) == HEARTH_OK);
    REQUIRE(hearth_scheduler_complete(sch.s, out, nullptr) == HEARTH_OK);
    hearth_outcome_free(out);
  }
  hearth_result res;
  REQUIRE(hearth_results_get(results, 0, &res, nullptr) == HEARTH_OK);
  CHECK(res.phase == HEARTH_PHASE_FINISHED);
  CHECK(std::string(res.work_class) == "voice");
  hearth_results_free(results);
  CHECK(hearth_scheduler_set_priority(sch.s, id, 1, nullptr) == HEARTH_NOT_FOUND);
}

}  // namespace

namespace {

// hearth_options_add_user / add_work_class with `name`: the status and
// message.
hearth_status AddName(bool user, const std::string& name, std::string* message) {
  hearth_options* o = nullptr;
  REQUIRE(hearth_options_new(&o, nullptr) == HEARTH_OK);
  Error e;
  const hearth_status status =
      user ? hearth_options_add_user(o, name.c_str(), 1.0, &e)
           : hearth_options_add_work_class(o, name.c_str(), 0, 0, INFINITY, &e);
  hearth_options_free(o);
  *message = e.message();
  return status;
}

// Runs `r` alone to its end through the C API; its result's cached tokens.
int32_t CachedTokensOf(hearth_scheduler* s, const hearth_request& r, double* now) {
  uint64_t id = 0;
  REQUIRE(hearth_scheduler_submit(s, &r, &id, nullptr) == HEARTH_OK);
  hearth_outcome* out = nullptr;
  REQUIRE(hearth_outcome_new(&out, nullptr) == HEARTH_OK);
  int32_t cached = -1;
  for (int step = 0; step < 100 && cached < 0; ++step) {
    const hearth_plan* plan = nullptr;
    REQUIRE(hearth_scheduler_plan(s, *now += 0.01, &plan, nullptr) == HEARTH_OK);
    REQUIRE(hearth_outcome_fill_from_plan(out, plan, nullptr) == HEARTH_OK);
    REQUIRE(hearth_scheduler_complete(s, out, nullptr) == HEARTH_OK);
    hearth_results* results = nullptr;
    REQUIRE(hearth_scheduler_drain(s, &results, nullptr) == HEARTH_OK);
    for (size_t i = 0; i < hearth_results_count(results); ++i) {
      hearth_result res;
      REQUIRE(hearth_results_get(results, i, &res, nullptr) == HEARTH_OK);
      if (res.id == id) cached = res.cached_prompt_tokens;
    }
    hearth_results_free(results);
  }
  hearth_outcome_free(out);
  return cached;
}

}  // namespace

TEST_CASE("C API: names are checked where they enter (setters and JSON)", "[capi][names]") {
  std::string message;
  for (const bool user : {true, false}) {
    INFO((user ? "hearth_options_add_user" : "hearth_options_add_work_class"));
    CHECK(AddName(user, "a\xff\xfe", &message) == HEARTH_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::Contains("name is \"a\\xff\\xfe\" (3 bytes); byte 1 is not valid UTF-8"));
    CHECK(AddName(user, "tab\there", &message) == HEARTH_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::Contains("U+0009"));
    // Read no further than one byte past the limit.
    CHECK(AddName(user, std::string(10 << 20, 'x'), &message) == HEARTH_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::Contains("(257 bytes); it is longer than 256 bytes"));
    CHECK(AddName(user, std::string(256, 'x'), &message) == HEARTH_OK);
    CHECK(AddName(user, "carol \"c\" \u00e9", &message) == HEARTH_OK);
  }
  CHECK(AddName(true, "_other", &message) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("\"_other\" is reserved"));

  // Names that differ only after a NUL were two users that both printed as
  // "a".
  CHECK(OptionsStatus(R"({"users": [{"name": "a\u0000b"}, {"name": "a\u0000c"}]})", &message) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("options JSON: \"users[0].name\" is \"a\\x00\\x62\" (3 bytes); "
                                      "byte 1 is the control character U+0000"));
  CHECK(OptionsStatus(R"({"work_classes": [{"name": "ok"}, {"name": "\u001b[31m"}]})", &message) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("\"work_classes[1].name\""));
  CHECK(OptionsStatus(R"({"models": [{"name": "m"}, {"name": "l", "base_model": "m\u2028"}]})",
                      &message) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("\"models[1].base_model\""));
  CHECK(OptionsStatus(R"({"users": [{"name": ")" + std::string(300, 'u') + R"("}]})",
                      &message) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("(300 bytes); it is longer than 256 bytes"));
  CHECK(OptionsStatus(R"({"users": [{"name": "_other"}]})", &message) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("users[0].name is \"_other\", which is reserved"));
  CHECK(OptionsStatus(R"({"users": [{"name": "\u00e9 \"q\" \\ \ud83d\ude00"}]})", &message) ==
        HEARTH_OK);
}

TEST_CASE("C API: cache scopes keep members' prefixes apart unless shared", "[capi]") {
  Scheduler sch(
      "{\"users\": [{\"name\": \"ana\"}, {\"name\": \"ben\"}], "
      "\"kv\": {\"prefix_hash_key\": -12345}}");
  std::vector<int32_t> ids(64, 0);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i * 7 % 500);
  hearth_request r = Request(0, 2);
  r.prompt_token_ids = ids.data();
  r.num_prompt_token_ids = ids.size();
  double now = 0;
  r.user = "ana";
  CHECK(CachedTokensOf(sch.s, r, &now) == 0);
  r.user = "ben";
  CHECK(CachedTokensOf(sch.s, r, &now) == 0);  // Ana's blocks are not his.
  r.user = "ana";
  CHECK(CachedTokensOf(sch.s, r, &now) == 63);
  // The first 32 tokens in a shared scope: Ben finds those, not the rest.
  r.shared_prefix_tokens = 32;
  r.shared_prefix_scope = "template";
  CHECK(CachedTokensOf(sch.s, r, &now) == 0);
  r.user = "ben";
  CHECK(CachedTokensOf(sch.s, r, &now) == 32);
  // A named scope for the whole prompt, and an opt-out.
  r.shared_prefix_tokens = 0;
  r.shared_prefix_scope = nullptr;
  r.cache_scope = "house";
  CHECK(CachedTokensOf(sch.s, r, &now) == 0);
  r.user = "ana";
  CHECK(CachedTokensOf(sch.s, r, &now) == 63);
  r.cache_scope = nullptr;
  r.cache_opt_out = 1;
  CHECK(CachedTokensOf(sch.s, r, &now) == 0);

  // Hostile scopes: a name past 256 bytes (only 257 are read), NUL-free
  // invalid UTF-8, a shared prefix past the prompt.
  const std::string huge(1 << 20, 's');
  struct Bad {
    const char* scope;
    int32_t shared;
    const char* shared_scope;
    int32_t opt_out;
    const char* message_has;
  } bad[] = {
      {huge.c_str(), 0, nullptr, 0, "cache_scope.name is 257 bytes; at most 256"},
      {"\xff", 0, nullptr, 0, "cache_scope.name is not valid UTF-8 (byte 0xff at offset 0)"},
      {nullptr, 65, "t", 0, "shared_prefix_tokens is 65; must be in [0, prompt_tokens = 64]"},
      {nullptr, -1, "t", 0, "shared_prefix_tokens is -1"},
      {nullptr, 8, nullptr, 0, "shared_prefix_scope is empty but shared_prefix_tokens is 8"},
      {"house", 0, nullptr, 1, "cache_scope.opt_out is true with a scope name"},
  };
  for (const Bad& b : bad) {
    INFO(b.message_has);
    hearth_request h = r;
    h.cache_scope = b.scope;
    h.shared_prefix_tokens = b.shared;
    h.shared_prefix_scope = b.shared_scope;
    h.cache_opt_out = b.opt_out;
    uint64_t id = 0;
    Error e;
    CHECK(hearth_scheduler_submit(sch.s, &h, &id, &e) == HEARTH_INVALID_ARGUMENT);
    CHECK(e.message().find(b.message_has) != std::string::npos);
  }
  std::string message;
  CHECK(OptionsStatus("{\"kv\": {\"prefix_hash_key\": \"x\"}}", &message) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK(message.find("kv.prefix_hash_key") != std::string::npos);
}

TEST_CASE("C API: metrics off runs the same loop and refuses the metrics calls", "[capi]") {
  Error e;
  // From JSON, and the setter on options that had them on.
  Scheduler off("{\"kv\": {\"num_device_blocks\": 64}, \"metrics\": {\"enabled\": false}}");
  hearth_options* o = nullptr;
  REQUIRE(hearth_options_new(&o, &e) == HEARTH_OK);
  CHECK(hearth_options_set_metrics(nullptr, 0, &e) == HEARTH_INVALID_ARGUMENT);
  REQUIRE(hearth_options_set_metrics(o, 0, &e) == HEARTH_OK);
  hearth_scheduler* set = nullptr;
  REQUIRE(hearth_scheduler_create(o, &set, &e) == HEARTH_OK);
  hearth_options_free(o);
  std::string message;
  CHECK(OptionsStatus("{\"metrics\": {\"enabled\": 0}}", &message) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(message, Catch::Contains("metrics.enabled"));
  for (hearth_scheduler* s : {off.s, set}) {
    hearth_request r = Request(20, 3);
    uint64_t id = 0;
    REQUIRE(hearth_scheduler_submit(s, &r, &id, &e) == HEARTH_OK);
    hearth_outcome* outcome = nullptr;
    REQUIRE(hearth_outcome_new(&outcome, &e) == HEARTH_OK);
    size_t ended = 0;
    for (double now = 0; ended == 0 && now < 10; now += 0.02) {
      const hearth_plan* plan = nullptr;
      REQUIRE(hearth_scheduler_plan(s, now, &plan, &e) == HEARTH_OK);
      REQUIRE(hearth_outcome_begin(outcome, plan, &e) == HEARTH_OK);
      for (size_t i = 0; i < hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES); ++i) {
        hearth_sequence q;
        REQUIRE(hearth_plan_sequence(plan, i, &q, &e) == HEARTH_OK);
        REQUIRE(hearth_outcome_add(outcome, q.id, q.sample, 7, HEARTH_FINISH_NONE, &e) ==
                HEARTH_OK);
      }
      REQUIRE(hearth_scheduler_complete(s, outcome, &e) == HEARTH_OK);
      hearth_results* results = nullptr;
      REQUIRE(hearth_scheduler_drain(s, &results, &e) == HEARTH_OK);
      ended += hearth_results_count(results);
      hearth_results_free(results);
    }
    CHECK(ended == 1);
    hearth_stats stats;
    REQUIRE(hearth_scheduler_stats(s, &stats, &e) == HEARTH_OK);
    CHECK(stats.finished == 1);
    hearth_metrics m;
    CHECK(hearth_scheduler_metrics(s, nullptr, &m, &e) == HEARTH_FAILED_PRECONDITION);
    CHECK_THAT(e.message(), Catch::Contains("metrics are off"));
    char* text = reinterpret_cast<char*>(&m);
    CHECK(hearth_scheduler_prometheus_text(s, 1, nullptr, &text, nullptr, &e) ==
          HEARTH_FAILED_PRECONDITION);
    CHECK(text == nullptr);
    hearth_outcome_free(outcome);
  }
  hearth_scheduler_free(set);
}

TEST_CASE("C API: a held request waits for hearth_scheduler_release", "[capi]") {
  Scheduler s;
  Error e;
  hearth_request r = Request(16, 2);
  r.hold = 1;
  uint64_t held = 0;
  REQUIRE(hearth_scheduler_submit(s.s, &r, &held, &e) == HEARTH_OK);
  CHECK(hearth_scheduler_release(s.s, held + 100, &e) == HEARTH_NOT_FOUND);
  CHECK(hearth_scheduler_release(nullptr, held, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(std::string(hearth_phase_name(HEARTH_PHASE_HELD)) == "held");
  hearth_outcome* o = nullptr;
  REQUIRE(hearth_outcome_new(&o, &e) == HEARTH_OK);
  size_t ended = 0, planned_while_held = 0;
  for (int step = 0; step < 40 && ended == 0; ++step) {
    if (step == 5) {
      REQUIRE(hearth_scheduler_release(s.s, held, &e) == HEARTH_OK);
      CHECK(hearth_scheduler_release(s.s, held, &e) == HEARTH_FAILED_PRECONDITION);
    }
    const hearth_plan* plan = nullptr;
    REQUIRE(hearth_scheduler_plan(s.s, 0.02 * step, &plan, &e) == HEARTH_OK);
    if (step < 5) planned_while_held += hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES);
    REQUIRE(hearth_outcome_fill_from_plan(o, plan, &e) == HEARTH_OK);
    REQUIRE(hearth_scheduler_complete(s.s, o, &e) == HEARTH_OK);
    hearth_results* results = nullptr;
    REQUIRE(hearth_scheduler_drain(s.s, &results, &e) == HEARTH_OK);
    ended += hearth_results_count(results);
    hearth_results_free(results);
  }
  CHECK(planned_while_held == 0);
  CHECK(ended == 1);
  hearth_outcome_free(o);
}

TEST_CASE("C API: an embedding is planned with its bits and ends pooled", "[capi][embed]") {
  Scheduler s("{\"kv\": {\"num_device_blocks\": 64}, \"max_batched_tokens\": 16, \"max_running\": 8}");
  Error e;
  hearth_request r = Request(40, 0);
  r.kind = HEARTH_KIND_EMBED;
  r.pooling = HEARTH_POOLING_MEAN;
  uint64_t id = 0;
  REQUIRE(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_OK);
  // Out of the enums' ranges, and the kind's own rules.
  for (const auto& [kind, pooling, max_new, what] :
       {std::tuple{256, 0, 0, "hearth_request.kind is 256"},
        std::tuple{1, -1, 0, "hearth_request.pooling is -1"},
        std::tuple{1, 0, 4, "must be 0"},
        std::tuple{0, 0, 0, "max_new_tokens is 0"}}) {
    hearth_request bad = Request(8, max_new);
    bad.kind = kind;
    bad.pooling = pooling;
    uint64_t ignored = 0;
    CHECK(hearth_scheduler_submit(s.s, &bad, &ignored, &e) == HEARTH_INVALID_ARGUMENT);
    CHECK_THAT(e.message(), Catch::Contains(what));
  }
  hearth_outcome* o = nullptr;
  REQUIRE(hearth_outcome_new(&o, &e) == HEARTH_OK);
  std::vector<uint32_t> flags;
  hearth_result result{};
  size_t ended = 0;
  for (int step = 0; step < 10 && ended == 0; ++step) {
    const hearth_plan* plan = nullptr;
    REQUIRE(hearth_scheduler_plan(s.s, 0.02 * step, &plan, &e) == HEARTH_OK);
    if (hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES) == 1) {
      const uint32_t f = hearth_plan_sequence_flags(plan, 0);
      flags.push_back(f);
      hearth_plan_arrays a{};
      REQUIRE(hearth_plan_get_arrays(plan, &a, sizeof a, &e) == HEARTH_OK);
      CHECK(a.flags[0] == f);
    }
    REQUIRE(hearth_outcome_fill_from_plan(o, plan, &e) == HEARTH_OK);
    REQUIRE(hearth_scheduler_complete(s.s, o, &e) == HEARTH_OK);
    hearth_results* results = nullptr;
    REQUIRE(hearth_scheduler_drain(s.s, &results, &e) == HEARTH_OK);
    ended += hearth_results_count(results);
    if (hearth_results_count(results) == 1) {
      REQUIRE(hearth_results_get(results, 0, &result, &e) == HEARTH_OK);
    }
    hearth_results_free(results);
  }
  REQUIRE(ended == 1);
  CHECK(result.finish_reason == HEARTH_FINISH_POOLED);
  CHECK(result.output_tokens == 0);
  constexpr uint32_t kEmbed = HEARTH_SEQUENCE_EMBED | HEARTH_SEQUENCE_MEAN_POOL;
  CHECK(flags == std::vector<uint32_t>{kEmbed | HEARTH_SEQUENCE_FULL_BLOCK_TABLE, kEmbed,
                                       kEmbed | HEARTH_SEQUENCE_POOL});
  CHECK(hearth_plan_sequence_flags(nullptr, 0) == 0);
  hearth_outcome_free(o);
}

TEST_CASE("C API: a photo's encoder span is planned as an encoder input, whole",
          "[capi][multimodal]") {
  Scheduler s("{\"kv\": {\"num_device_blocks\": 64}, \"max_batched_tokens\": 32, "
              "\"max_prefill_chunk_tokens\": 8, \"max_encoder_tokens_per_step\": 16, "
              "\"max_running\": 8}");
  Error e;
  hearth_request r = Request(40, 2);
  const hearth_encoder_span spans[] = {{10, 16, 0xFEEDu}};
  r.encoder_spans = spans;
  r.num_encoder_spans = 1;
  uint64_t id = 0;
  REQUIRE(hearth_scheduler_submit(s.s, &r, &id, &e) == HEARTH_OK);
  hearth_request bad = Request(40, 2);
  const hearth_encoder_span too_long[] = {{0, 17, 1}};
  bad.encoder_spans = too_long;
  bad.num_encoder_spans = 1;
  uint64_t ignored = 0;
  CHECK(hearth_scheduler_submit(s.s, &bad, &ignored, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(e.message(), Catch::Contains("max_encoder_tokens_per_step (16)"));
  bad.encoder_spans = nullptr;
  CHECK(hearth_scheduler_submit(s.s, &bad, &ignored, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(e.message(), Catch::Contains("encoder_spans NULL"));
  hearth_outcome* o = nullptr;
  REQUIRE(hearth_outcome_new(&o, &e) == HEARTH_OK);
  std::vector<std::pair<int32_t, int32_t>> chunks;
  int encodes = 0;
  for (int step = 0; step < 20; ++step) {
    const hearth_plan* plan = nullptr;
    REQUIRE(hearth_scheduler_plan(s.s, 0.02 * step, &plan, &e) == HEARTH_OK);
    hearth_plan_arrays a{};
    REQUIRE(hearth_plan_get_arrays(plan, &a, sizeof a, &e) == HEARTH_OK);
    REQUIRE(a.num_encoder_inputs == hearth_plan_count(plan, HEARTH_PLAN_ENCODER_INPUTS));
    for (size_t i = 0; i < a.num_encoder_inputs; ++i) {
      hearth_plan_entry in{};
      REQUIRE(hearth_plan_entry_at(plan, HEARTH_PLAN_ENCODER_INPUTS, i, &in, &e) == HEARTH_OK);
      CHECK(in.id == id);
      CHECK(in.kind == 1);
      CHECK(in.target == 0);
      CHECK(in.source == a.encoder_inputs[i].source);
      encodes += in.kind;
      CHECK(a.num_encoder_tokens == 16);
    }
    for (size_t i = 0; i < a.num_sequences; ++i) {
      if (a.start_position[i] < 40) chunks.emplace_back(a.start_position[i], a.num_tokens[i]);
    }
    REQUIRE(hearth_outcome_fill_from_plan(o, plan, &e) == HEARTH_OK);
    REQUIRE(hearth_scheduler_complete(s.s, o, &e) == HEARTH_OK);
  }
  CHECK(encodes == 1);
  CHECK(chunks == std::vector<std::pair<int32_t, int32_t>>{{0, 8}, {8, 2}, {10, 16}, {26, 8},
                                                          {34, 6}});
  hearth_outcome_free(o);
}

TEST_CASE("C API: parallel samples share ids, handles and cancellation", "[capi][samples]") {
  Scheduler s("{\"kv\": {\"num_device_blocks\": 64, \"enable_prefix_caching\": true}, "
              "\"max_running\": 8}");
  Error e;
  std::vector<int32_t> prompt(20);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(i + 1);
  hearth_request r = Request(20, 3);
  r.prompt_token_ids = prompt.data();
  r.num_prompt_token_ids = prompt.size();
  r.num_samples = 3;
  r.handle = 70;
  uint64_t first = 0;
  REQUIRE(hearth_scheduler_submit(s.s, &r, &first, &e) == HEARTH_OK);
  hearth_request cancelled = r;
  uint64_t second = 0;
  REQUIRE(hearth_scheduler_submit(s.s, &cancelled, &second, &e) == HEARTH_OK);
  CHECK(second == first + 3);
  REQUIRE(hearth_scheduler_cancel(s.s, second + 1, &e) == HEARTH_OK);
  r.num_samples = 65;
  uint64_t ignored = 0;
  CHECK(hearth_scheduler_submit(s.s, &r, &ignored, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK_THAT(e.message(), Catch::Contains("num_samples is 65"));
  hearth_outcome* o = nullptr;
  REQUIRE(hearth_outcome_new(&o, &e) == HEARTH_OK);
  std::vector<hearth_result> ended;
  for (int step = 0; step < 40 && ended.size() < 6; ++step) {
    const hearth_plan* plan = nullptr;
    REQUIRE(hearth_scheduler_plan(s.s, 0.02 * step, &plan, &e) == HEARTH_OK);
    REQUIRE(hearth_outcome_fill_from_plan(o, plan, &e) == HEARTH_OK);
    REQUIRE(hearth_scheduler_complete(s.s, o, &e) == HEARTH_OK);
    hearth_results* results = nullptr;
    REQUIRE(hearth_scheduler_drain(s.s, &results, &e) == HEARTH_OK);
    for (size_t i = 0; i < hearth_results_count(results); ++i) {
      REQUIRE(hearth_results_get(results, i, &ended.emplace_back(), &e) == HEARTH_OK);
    }
    hearth_results_free(results);
  }
  REQUIRE(ended.size() == 6);
  for (const hearth_result& x : ended) {
    const uint64_t base = x.id < second ? first : second;
    CHECK(x.handle == 70 + (x.id - base));
    CHECK(x.phase == (base == first ? HEARTH_PHASE_FINISHED : HEARTH_PHASE_CANCELLED));
  }
  hearth_outcome_free(o);
}

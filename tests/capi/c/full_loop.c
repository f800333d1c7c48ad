/* A C11 host of Hearth: builds options from JSON and setters, submits from
 * the "host", runs the engine loop (plan, walk every entry, complete from
 * the plan) until every request has ended, drains the results, reads stats
 * and the Prometheus text, and checks that bad arguments come back as
 * errors. Compiled with -std=c11 -pedantic-errors -Wall -Werror; exits
 * non-zero, saying why, on the first failed check. */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hearth/c/hearth.h"

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "full_loop.c:%d: check failed: %s\n", __LINE__, #cond); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

/* Calls that must succeed; prints the API's message otherwise. The call
 * names must_error_ as its error argument: the macro declares it, so that
 * each call site reads as one line. */
#define MUST(call)                                                       \
  do {                                                                   \
    hearth_error* must_error_ = NULL;                                    \
    hearth_status must_status_ = (call);                                 \
    if (must_status_ != HEARTH_OK) {                                     \
      fprintf(stderr, "full_loop.c:%d: %s failed: %s: %s\n", __LINE__, #call, \
              hearth_status_name(must_status_),                          \
              hearth_error_message(must_error_));                        \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

enum { kRequests = 24 };

static const char* const kOptionsJson =
    "{\"users\": [{\"name\": \"alice\"}, {\"name\": \"bob\", \"weight\": 2}],"
    " \"work_classes\": \"household\","
    " \"kv\": {\"num_device_blocks\": 96, \"block_size\": 16},"
    " \"policy\": \"household\", \"max_batched_tokens\": 256}";

/* Bad arguments are errors with messages, never crashes. */
static void CheckErrors(hearth_scheduler* scheduler) {
  hearth_error* error = NULL;
  hearth_options* options = NULL;
  uint64_t id = 0;
  const hearth_plan* plan = NULL;
  hearth_request request = hearth_request_default();

  CHECK(hearth_options_from_json("{\"kv\": {\"num_blocks\": 1}}", &options, &error) ==
        HEARTH_INVALID_ARGUMENT);
  CHECK(options == NULL);
  CHECK(hearth_error_code(error) == HEARTH_INVALID_ARGUMENT);
  CHECK(strstr(hearth_error_message(error), "kv.num_blocks") != NULL);
  CHECK(hearth_options_from_json("{not json", &options, &error) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_options_from_json(NULL, &options, &error) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_create(NULL, NULL, &error) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_submit(NULL, &request, &id, &error) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_submit(scheduler, NULL, &id, NULL) == HEARTH_INVALID_ARGUMENT);

  request.prompt_tokens = -1;
  request.max_new_tokens = 8;
  CHECK(hearth_scheduler_submit(scheduler, &request, &id, &error) == HEARTH_INVALID_ARGUMENT);
  request.prompt_tokens = 8;
  request.user = "mallory";
  CHECK(hearth_scheduler_submit(scheduler, &request, &id, &error) == HEARTH_NOT_FOUND);
  CHECK(strstr(hearth_error_message(error), "mallory") != NULL);
  request.user = NULL;
  request.arrival_time_s = NAN;
  CHECK(hearth_scheduler_submit(scheduler, &request, &id, &error) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_plan(scheduler, NAN, &plan, &error) == HEARTH_INVALID_ARGUMENT);
  CHECK(hearth_scheduler_cancel(scheduler, 999999, &error) == HEARTH_NOT_FOUND);
  CHECK(hearth_plan_count(NULL, HEARTH_PLAN_SEQUENCES) == 0);
  /* C allows any int in an enum argument; the library must too. */
  CHECK(strcmp(hearth_status_name((hearth_status)99), "UNKNOWN_CODE") == 0);
  CHECK(strcmp(hearth_phase_name((hearth_phase)-1), "unknown") == 0);
  CHECK(hearth_results_count(NULL) == 0);
  hearth_error_free(error);
}

/* Every entry of the plan, read as an engine would apply it. Returns the
 * number of sequences. */
static size_t WalkPlan(const hearth_plan* plan) {
  size_t list, i;
  for (list = HEARTH_PLAN_PREEMPTED; list <= HEARTH_PLAN_MODEL_COMMANDS; ++list) {
    for (i = 0; i < hearth_plan_count(plan, (hearth_plan_list)list); ++i) {
      hearth_plan_entry entry;
      MUST(hearth_plan_entry_at(plan, (hearth_plan_list)list, i, &entry, &must_error_));
    }
  }
  for (i = 0; i < hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES); ++i) {
    hearth_sequence s;
    MUST(hearth_plan_sequence(plan, i, &s, &must_error_));
    CHECK(s.num_tokens >= 1);
    CHECK(s.num_block_table >= 1 && s.block_table != NULL);
    if (s.full_block_table) CHECK(s.num_new_blocks == s.num_block_table);
  }
  return hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES);
}

int main(void) {
  hearth_options* options = NULL;
  hearth_scheduler* scheduler = NULL;
  hearth_outcome* outcome = NULL;
  uint64_t ids[kRequests];
  int32_t tokens[40];
  int ended = 0, step, i;
  double now = 100.0;

  CHECK(strcmp(hearth_version(), HEARTH_VERSION_STRING) == 0);
  MUST(hearth_options_from_json(kOptionsJson, &options, &must_error_));
  MUST(hearth_options_set_batch_limits(options, 256, 16, 64, &must_error_));
  MUST(hearth_scheduler_create(options, &scheduler, &must_error_));
  hearth_options_free(options);
  CheckErrors(scheduler);

  for (i = 0; i < 40; ++i) tokens[i] = 1000 + i % 7;
  for (i = 0; i < kRequests; ++i) {
    hearth_request r = hearth_request_default();
    r.user = i % 2 ? "bob" : "alice";
    r.work_class = i % 3 ? "chat" : "voice";
    r.prompt_tokens = 20 + 10 * (i % 5);
    if (i % 4 == 0) {  /* with token ids: prefix caching sees them */
      r.prompt_token_ids = tokens;
      r.num_prompt_token_ids = 40;
      r.prompt_tokens = 0;
    }
    r.max_new_tokens = 4 + i % 6;
    r.label = "c-host";
    MUST(hearth_scheduler_submit(scheduler, &r, &ids[i], &must_error_));
  }
  MUST(hearth_scheduler_cancel(scheduler, ids[kRequests - 1], &must_error_));
  MUST(hearth_outcome_new(&outcome, &must_error_));

  for (step = 0; step < 1000 && ended < kRequests; ++step) {
    const hearth_plan* plan = NULL;
    hearth_results* results = NULL;
    size_t n;
    now += 0.02;
    MUST(hearth_scheduler_plan(scheduler, now, &plan, &must_error_));
    n = WalkPlan(plan);
    CHECK(hearth_plan_count(plan, (hearth_plan_list)-3) == 0);
    if (step == 0) {
      hearth_plan_entry entry;
      hearth_error* error = NULL;
      CHECK(hearth_plan_entry_at(plan, (hearth_plan_list)42, 0, &entry, &error) ==
            HEARTH_INVALID_ARGUMENT);
      CHECK(hearth_outcome_begin(outcome, plan, &error) == HEARTH_OK);
      CHECK(hearth_outcome_add(outcome, 1, 1, 0, (hearth_finish_reason)77, &error) ==
            HEARTH_INVALID_ARGUMENT);
      hearth_error_free(error);
    }
    MUST(hearth_outcome_begin(outcome, plan, &must_error_));
    for (i = 0; i < (int)n; ++i) {
      hearth_sequence s;
      MUST(hearth_plan_sequence(plan, (size_t)i, &s, &must_error_));
      /* Request ids[2] meets a stop token at its first decode. */
      MUST(hearth_outcome_add(outcome, s.id, s.sample, 7,
                              s.decode && s.id == ids[2] ? HEARTH_FINISH_STOP_TOKEN
                                                         : HEARTH_FINISH_NONE,
                              &must_error_));
    }
    MUST(hearth_outcome_set_completed_at(outcome, now + 0.01, &must_error_));
    MUST(hearth_scheduler_complete(scheduler, outcome, &must_error_));
    MUST(hearth_scheduler_drain(scheduler, &results, &must_error_));
    for (i = 0; i < (int)hearth_results_count(results); ++i) {
      hearth_result r;
      MUST(hearth_results_get(results, (size_t)i, &r, &must_error_));
      CHECK(r.phase >= HEARTH_PHASE_FINISHED);
      CHECK(strcmp(r.label, "c-host") == 0);
      if (r.id == ids[kRequests - 1]) CHECK(r.phase == HEARTH_PHASE_CANCELLED);
      if (r.id == ids[2]) CHECK(r.finish_reason == HEARTH_FINISH_STOP_TOKEN);
      if (r.phase == HEARTH_PHASE_FINISHED) CHECK(isfinite(r.first_token_time_s));
      ++ended;
    }
    hearth_results_free(results);
  }
  CHECK(ended == kRequests);

  {
    hearth_stats stats;
    hearth_metrics metrics;
    char* text = NULL;
    size_t length = 0;
    MUST(hearth_scheduler_stats(scheduler, &stats, &must_error_));
    CHECK(stats.running == 0 && stats.waiting == 0 && stats.queued == 0);
    MUST(hearth_scheduler_metrics(scheduler, "user:bob", &metrics, &must_error_));
    CHECK(metrics.finished > 0);
    MUST(hearth_scheduler_prometheus_text(scheduler, 1, "tiny", &text, &length, &must_error_));
    CHECK(text != NULL && length > 0 && strlen(text) == length);
    CHECK(strstr(text, "hearth_requests_ended_total") != NULL);
    CHECK(strstr(text, "vllm:num_requests_running{model_name=\"tiny\"}") != NULL);
    printf("hearth %s: %d requests ended in %d steps; %llu finished; %zu bytes of "
           "Prometheus text\n",
           hearth_version(), ended, step, (unsigned long long)stats.finished, length);
    hearth_string_free(text);
  }
  hearth_outcome_free(outcome);
  hearth_scheduler_free(scheduler);
  return 0;
}

/* File: hearth/c/hearth.h
 *
 * Hearth's C API: the scheduler for hosts written in C, or in any language
 * with a C foreign-function interface (Python ctypes, Go cgo, Rust, Zig).
 * Pure C11; nothing C++ crosses it. Link libhearth_c (pkg-config: hearth;
 * CMake: find_package(hearth COMPONENTS c), target hearth::c).
 *
 * The iteration contract is the C++ one (hearth/scheduler/scheduler.h):
 *   any thread:    hearth_scheduler_submit(), hearth_scheduler_cancel(),
 *                  hearth_scheduler_drain()
 *   engine thread: loop {
 *                    hearth_scheduler_wait_for_work(s, next_event - now);
 *                    hearth_scheduler_plan(s, now, &plan, &err);
 *                    ... apply released, preempted, swap-outs, swap-ins,
 *                        copy-on-writes, model commands; run its sequences;
 *                    hearth_outcome_begin(o, plan); hearth_outcome_add(...);
 *                    hearth_outcome_set_completed_at(o, end_of_step, &err);
 *                    hearth_scheduler_complete(s, o, &err);
 *                  }
 *
 * ERRORS. Every fallible function returns a hearth_status (HEARTH_OK is 0;
 * the other codes are absl::StatusCode's numbers) and takes a last argument
 * `hearth_error** error`. It may be NULL (only the code is wanted). If not,
 * on failure *error is set to a new error object, whose message names what
 * was wrong and what is allowed; any error already in *error is freed first,
 * so *error must be NULL or an error from this API. On success *error is left
 * as it is. The caller frees an error with hearth_error_free(). Every pointer
 * argument is checked: NULL where an object is required is
 * HEARTH_INVALID_ARGUMENT, never a crash. There is no global error state.
 *
 * OWNERSHIP. Each *_new / *_from_json / *_create / *_drain hands the caller an
 * object that the caller frees with the matching *_free (NULL is accepted and
 * ignored).
 * Strings passed in are copied; the caller keeps them. Strings returned as
 * `char*` are the caller's, freed with hearth_string_free(). A plan
 * (hearth_plan) belongs to the scheduler: it and every pointer read from it
 * (block tables, token ids) stay valid until the next
 * hearth_scheduler_complete() that succeeds, or hearth_scheduler_free().
 *
 * THREAD-SAFETY. hearth_scheduler_submit, hearth_scheduler_cancel(_reason),
 * hearth_scheduler_set_priority, hearth_scheduler_set_work_class,
 * hearth_scheduler_add_model, hearth_scheduler_remove_model,
 * hearth_scheduler_wake, hearth_scheduler_published_stats and
 * hearth_scheduler_drain may be called from any thread, concurrently with
 * each other and with the engine thread. The id a submit returns may be
 * planned by the engine thread before the submitting thread has stored it:
 * key the host's data by the request's `handle`, set before submitting; every
 * plan entry and result carries it. Every other function on a scheduler
 * (plan, complete, stats, metrics, prometheus text, free) belongs to one
 * thread at a time, the engine thread. Options, outcome and results objects
 * are not shared: one thread at a time each. hearth_version() and
 * hearth_status_name() may be called from anywhere.
 *
 * UNITS. Times are seconds as double, on the host's clock (any origin, the
 * same for every call; quota windows align to its zero). Token counts are
 * tokens, block ids are indices into the host's KV pools.
 */

#ifndef HEARTH_C_HEARTH_H_
#define HEARTH_C_HEARTH_H_

#include <stddef.h>
#include <stdint.h>

#include "hearth/version.h"

/* HEARTH_C_API marks the functions libhearth_c exports; everything else in
 * the shared library is hidden. Define HEARTH_C_STATIC when linking the
 * static library on Windows (elsewhere it changes nothing). */
#if defined(_WIN32)
#if defined(HEARTH_C_BUILDING)
#define HEARTH_C_API __declspec(dllexport)
#elif defined(HEARTH_C_STATIC)
#define HEARTH_C_API
#else
#define HEARTH_C_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define HEARTH_C_API __attribute__((visibility("default")))
#else
#define HEARTH_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status and errors ------------------------------------------------ */

/* The codes of absl::StatusCode, with the same numbers. The API returns
 * INVALID_ARGUMENT (bad input), NOT_FOUND (unknown id or name),
 * RESOURCE_EXHAUSTED (a queue or quota is full), FAILED_PRECONDITION (call
 * order), OUT_OF_RANGE (an index past the end), INTERNAL (a bug; please
 * report) and RESOURCE_EXHAUSTED for out-of-memory. */
typedef enum hearth_status {
  HEARTH_OK = 0,
  HEARTH_CANCELLED = 1,
  HEARTH_UNKNOWN = 2,
  HEARTH_INVALID_ARGUMENT = 3,
  HEARTH_DEADLINE_EXCEEDED = 4,
  HEARTH_NOT_FOUND = 5,
  HEARTH_ALREADY_EXISTS = 6,
  HEARTH_PERMISSION_DENIED = 7,
  HEARTH_RESOURCE_EXHAUSTED = 8,
  HEARTH_FAILED_PRECONDITION = 9,
  HEARTH_ABORTED = 10,
  HEARTH_OUT_OF_RANGE = 11,
  HEARTH_UNIMPLEMENTED = 12,
  HEARTH_INTERNAL = 13,
  HEARTH_UNAVAILABLE = 14,
  HEARTH_DATA_LOSS = 15,
  HEARTH_UNAUTHENTICATED = 16
} hearth_status;

typedef struct hearth_error hearth_error;

/* The status code of `error` (HEARTH_INVALID_ARGUMENT for NULL). */
HEARTH_C_API hearth_status hearth_error_code(const hearth_error* error);
/* Its message, NUL-terminated, valid until hearth_error_free(error). Never
 * NULL ("" for a NULL error). */
HEARTH_C_API const char* hearth_error_message(const hearth_error* error);
HEARTH_C_API void hearth_error_free(hearth_error* error);

/* "OK", "INVALID_ARGUMENT", ...; "UNKNOWN_CODE" outside the enum. Static. */
HEARTH_C_API const char* hearth_status_name(hearth_status code);

/* Frees a string this API returned (NULL is ignored). */
HEARTH_C_API void hearth_string_free(char* text);

/* The linked library's version, "MAJOR.MINOR.PATCH" (static storage).
 * Compare with HEARTH_VERSION_STRING to catch mixed installs. */
HEARTH_C_API const char* hearth_version(void);

/* ---- Options ---------------------------------------------------------- */

/* What a scheduler is configured with. Starts as the C++ SchedulerOptions'
 * defaults (one model, user and work class named "default"; 4,096 device
 * blocks of 16 tokens; the "household" policy). Nothing is checked until
 * hearth_scheduler_create(), which validates everything and names the field
 * that is wrong (e.g. "SchedulerOptions.users[0].weight is nan; must be in
 * (0, 1e9]"). */
typedef struct hearth_options hearth_options;

HEARTH_C_API hearth_status hearth_options_new(hearth_options** out,
                                              hearth_error** error);

/* Options from a JSON object; keys left out keep their defaults. Unknown
 * keys, a key twice in one object, values of the wrong type and names that
 * are not valid (hearth/common/names.h) are INVALID_ARGUMENT naming them
 * with their path (e.g. "options JSON: unknown key \"kv.num_blocks\"; known
 * keys: ...", "options JSON: key \"users[1].name\" appears twice ...").
 * Durations are seconds (numbers), their keys ending in "_s"; null means
 * infinite where infinite is allowed. Lists replace the defaults whole.
 * Every SchedulerOptions field a value can express is a key, spelled as the
 * C++ field (hearth/scheduler/scheduler_options.h documents them):
 *   "models": [{"name", "context_length", "vocab_size",
 *               "kv_bytes_per_token", "weights_bytes", "preload",
 *               "keep_alive_s", "base_model" (an adapter of that model)}]
 *   "users": [{"name", "weight", "max_queued_requests", "token_quota",
 *              "quota_window_s"}]
 *   "work_classes": "household" (HouseholdWorkClasses(): voice, chat,
 *              agent, embedding, maintenance) or
 *              [{"name", "priority", "max_running", "kv_block_budget",
 *                "borrow", "queue_timeout_s", "max_retries", "weight",
 *                "ttft_slo_s", "tpot_slo_s", "e2e_slo_s"}]
 *              (SLO targets: seconds > 0 and at most 365 days, or null
 *              for none, the default)
 *   "kv": {"block_size", "num_device_blocks", "num_host_blocks",
 *          "watermark_blocks", "growth_headroom_tokens",
 *          "enable_prefix_caching",
 *          "prefix_hash_key" (an int64 secret mixed into cache scopes:
 *          KvCacheConfig::prefix_hash_key; hosts whose users choose prompt
 *          tokens set a random one)}
 *   "residency": {"device_memory_bytes", "max_concurrent_loads",
 *                 "max_resident_adapters", "max_adapters_per_step"}
 *   "policy": "fifo" | "vtc" | "priority" | "mlfq" | "household"
 *   "vtc": {"prompt_token_weight", "decode_token_weight",
 *           "preempt_for_admission", "admission_preemption_gap"}
 *   "priority": {"aging_interval_s", "quota_window_s",
 *                "quotas": [{"priority", "tokens_per_window", "max_share"}]}
 *   "mlfq": {"num_levels", "base_quantum", "prefill_token_cost",
 *            "decode_token_cost", "starvation_bound_s",
 *            "max_preemptions_per_step"}
 *   "household": {"request_level": "fifo" | "mlfq"}
 *   "workflow_head_start_s"
 *              (each policy's settings: hearth/policy/vtc.h, priority_quota.h,
 *              mlfq.h, policy_registry.h; the named policy reads its own,
 *              "household" reads vtc, priority and mlfq's too)
 *   "preemption_mode": "recompute" | "swap", "swap_block_cost_tokens",
 *   "max_admission_waste_per_block", "max_preemptions_per_request",
 *   "step_time_model": {"fixed_s", "per_token_s"}
 *   "max_pending_requests", "max_pending_bytes", "reserved_pending_share",
 *   "max_intake_per_plan", "max_label_bytes", "max_arrival_lead_s",
 *   "workflow_retention_s", "max_batched_tokens", "max_running",
 *   "max_prefill_chunk_tokens", "max_encoder_tokens_per_step",
 *   "encoder_cache_tokens", "max_admission_declines",
 *   "max_draft_tokens" (speculative decoding, 0 .. 8), "max_out_of_kv_reports",
 *   "overlap_planning" (true: plan step N+1 while step N runs)
 *   "metrics": {"enabled", "prefill_weight", "decode_weight", "max_gap_users"}
 *              (the built-in collector behind hearth_scheduler_metrics and
 *              the Prometheus text; "enabled": false, or
 *              hearth_options_set_metrics, leaves it out: each step then
 *              costs what the C++ core's does, and those two calls are
 *              FAILED_PRECONDITION)
 * `json` must be NUL-terminated; at most 16 MiB. */
HEARTH_C_API hearth_status hearth_options_from_json(const char* json,
                                                    hearth_options** out,
                                                    hearth_error** error);

HEARTH_C_API void hearth_options_free(hearth_options* options);

/* Setters for the common fields; each only stores the value (create
 * validates). A NULL options or string is INVALID_ARGUMENT. */
HEARTH_C_API hearth_status hearth_options_set_kv_blocks(
    hearth_options* options, int32_t block_size, int32_t num_device_blocks,
    int32_t num_host_blocks, hearth_error** error);
HEARTH_C_API hearth_status hearth_options_set_batch_limits(
    hearth_options* options, int32_t max_batched_tokens, int32_t max_running,
    int32_t max_prefill_chunk_tokens, hearth_error** error);
/* One of the names listed under "policy" above (checked here). */
HEARTH_C_API hearth_status hearth_options_set_policy(hearth_options* options,
                                                     const char* name,
                                                     hearth_error** error);
/* Whether the scheduler keeps the built-in metrics collector (default 1,
 * "metrics": {"enabled"} above): 0 turns it off. */
HEARTH_C_API hearth_status hearth_options_set_metrics(hearth_options* options,
                                                      int32_t enabled,
                                                      hearth_error** error);
/* The model context length (of the first model). */
HEARTH_C_API hearth_status hearth_options_set_context_length(
    hearth_options* options, int32_t context_length, hearth_error** error);
/* Replaces the user list with this user the first time it is called, then
 * appends. `name` must be a valid name (hearth/common/names.h: 1 to 256
 * bytes of UTF-8 without control characters), not "_other"; checked here,
 * reading at most 257 bytes. */
HEARTH_C_API hearth_status hearth_options_add_user(hearth_options* options,
                                                   const char* name,
                                                   double weight,
                                                   hearth_error** error);
/* Replaces the class list with this class the first time it is called, then
 * appends. `name` as for hearth_options_add_user. queue_timeout_s: INFINITY
 * for none. */
HEARTH_C_API hearth_status hearth_options_add_work_class(
    hearth_options* options, const char* name, int32_t priority,
    int32_t max_running, double queue_timeout_s, hearth_error** error);
/* The five household classes (see "work_classes" above). */
HEARTH_C_API hearth_status hearth_options_use_household_classes(
    hearth_options* options, hearth_error** error);

/* ---- Scheduler -------------------------------------------------------- */

typedef struct hearth_scheduler hearth_scheduler;

/* Validates `options` and builds a scheduler (the options are copied; free
 * them whenever). INVALID_ARGUMENT names the field. */
HEARTH_C_API hearth_status hearth_scheduler_create(
    const hearth_options* options, hearth_scheduler** out,
    hearth_error** error);
/* Engine thread; no other call on `scheduler` may be running or follow. */
HEARTH_C_API void hearth_scheduler_free(hearth_scheduler* scheduler);

/* No request (the `parent` of a request without one). */
#define HEARTH_NO_REQUEST UINT64_MAX

/* One request, as hearth_scheduler_submit() reads it. Start from
 * hearth_request_default() and set what you need. Strings and the token
 * array are read during the call only. Before 1.0 fields are appended
 * (hold, then kind, pooling and num_samples): a host that mirrors this layout instead of
 * compiling against this header (ctypes, a foreign struct) must match the
 * header of the library it loads (hearth_version()); the Python package
 * does. */
/* One encoder span of a multimodal prompt (EncoderSpan in
 * hearth/request/request_spec.h): positions [position, position + length)
 * computed by the engine's encoder from the content the host holds (by
 * handle and the span's index); content_hash tells contents apart in the
 * prefix and encoder caches. */
typedef struct hearth_encoder_span {
  int32_t position;
  int32_t length;
  uint64_t content_hash;
} hearth_encoder_span;

typedef struct hearth_request {
  /* Names from the options; NULL means the first configured one. */
  const char* user;
  const char* work_class;
  const char* model;
  /* Prompt length in tokens, > 0. With token ids it may be 0 (then the ids'
   * count) or must equal num_prompt_token_ids. */
  int32_t prompt_tokens;
  /* Optional prompt token ids (enable prefix caching); NULL for none. */
  const int32_t* prompt_token_ids;
  size_t num_prompt_token_ids;
  /* Upper bound on generated tokens: > 0 for a generation, 0 for an
   * embedding (kind). */
  int32_t max_new_tokens;
  /* Higher runs earlier under priority-aware policies; any value. */
  int32_t priority;
  /* Free-form label carried into results and metrics; NULL for none. */
  const char* label;
  /* When the request reached the host; -INFINITY (the default) means the
   * time of the plan that takes it in. NaN and +INFINITY are errors. */
  double arrival_time_s;
  /* Ends as timed out after this time; INFINITY (the default) for none. */
  double deadline_s;
  /* The request whose answer triggered this one (agent workflows), or
   * HEARTH_NO_REQUEST. */
  uint64_t parent;
  /* This request's own SLO targets in seconds, overriding its class's
   * (RequestSpec::ttft_slo, tpot_slo): 0 (the default) means the class's,
   * INFINITY no target; otherwise > 0 and at most 365 days. NaN, negative
   * and larger values are INVALID_ARGUMENT. */
  double ttft_slo_s;
  double tpot_slo_s;
  /* The host's own handle for the request, opaque to Hearth (default 0);
   * echoed in every plan entry and in the result (RequestSpec::handle). */
  uint64_t handle;
  /* Prefix-cache scope (RequestSpec::cache_scope in
   * hearth/request/request_spec.h): whose cached KV the request may reuse.
   * NULL or "" (the default): its user's own scope, so no other user's
   * request reuses its blocks or can tell they exist; a name: a scope
   * shared on purpose by every request naming it. At most 256 bytes of
   * UTF-8. */
  const char* cache_scope;
  /* The first shared_prefix_tokens prompt tokens are cached in scope
   * shared_prefix_scope (shared by every request naming it, e.g. for a
   * common system prompt), the rest in cache_scope's; 0 and NULL for none,
   * else in [1, prompt tokens] with a name as for cache_scope. */
  int32_t shared_prefix_tokens;
  const char* shared_prefix_scope;
  /* Nonzero: neither reuses nor leaves cached KV (then the three fields
   * above must be unset). */
  int32_t cache_opt_out;
  /* Nonzero: the request enters held (RequestSpec::hold), not runnable
   * until hearth_scheduler_release; its deadline and queue timeout run. */
  int32_t hold;
  /* HEARTH_KIND_GENERATE (0, the default) or HEARTH_KIND_EMBED: prefill
   * only, never sampled, finished with HEARTH_FINISH_POOLED by the step
   * whose sequence has HEARTH_SEQUENCE_POOL, after which the engine hands
   * its vector to the host itself (RequestKind in
   * hearth/request/request_spec.h). An embedding needs max_new_tokens 0
   * and tpot_slo_s 0 or INFINITY. */
  int32_t kind;
  /* Embeddings only: HEARTH_POOLING_LAST (0, the default: the last prompt
   * position's hidden state; reuses cached prefixes) or HEARTH_POOLING_MEAN
   * (the mean over every position: reuses no cached block and is never
   * swapped out). */
  int32_t pooling;
  /* Parallel sampling (RequestSpec::num_samples): 0 or 1 (the default) for
   * one answer; n in [2, 64] submits n samples of consecutive ids (*out_id
   * is sample 0's), sample k's plan entries and result carrying handle + k.
   * Sample 0 computes the prompt and the others reuse its cached blocks;
   * hearth_scheduler_cancel of any sample cancels all. */
  int32_t num_samples;
  /* Multimodal prompts (RequestSpec::encoder_spans): sorted, disjoint spans
   * within the prompt, at most 64; NULL and 0 for none. Copied at submit. */
  const hearth_encoder_span* encoder_spans;
  size_t num_encoder_spans;
} hearth_request;

#define HEARTH_KIND_GENERATE 0
#define HEARTH_KIND_EMBED 1
#define HEARTH_POOLING_LAST 0
#define HEARTH_POOLING_MEAN 1

/* A request with the defaults above and every count 0. */
HEARTH_C_API hearth_request hearth_request_default(void);

/* Any thread. Validates and queues `request`; *out_id is its id (ids are
 * never reused by one scheduler). INVALID_ARGUMENT says what is wrong;
 * NOT_FOUND names an unknown user, class or model; RESOURCE_EXHAUSTED when a
 * pending limit or quota is used up. */
HEARTH_C_API hearth_status hearth_scheduler_submit(
    hearth_scheduler* scheduler, const hearth_request* request,
    uint64_t* out_id, hearth_error** error);

/* Any thread. Ends a live request as cancelled (its blocks are released by
 * the next plan) unless it ends otherwise first (e.g. finishes with its
 * last token before that plan; its result then says so). NOT_FOUND for
 * unknown or already ended ids. */
HEARTH_C_API hearth_status hearth_scheduler_cancel(hearth_scheduler* scheduler,
                                                   uint64_t id,
                                                   hearth_error** error);
/* Same, with `reason` (copied; NULL or "" for none) leading the result's
 * message. */
HEARTH_C_API hearth_status hearth_scheduler_cancel_reason(
    hearth_scheduler* scheduler, uint64_t id, const char* reason,
    hearth_error** error);

/* Any thread. Makes a request submitted with `hold` ready to run at the next
 * plan (Scheduler::Release). NOT_FOUND for unknown, ended or cancelling
 * ids; FAILED_PRECONDITION for one not held (or released already). */
HEARTH_C_API hearth_status hearth_scheduler_release(hearth_scheduler* scheduler,
                                                    uint64_t id,
                                                    hearth_error** error);

/* Any thread. Changes a live request's priority (as hearth_request.priority)
 * or work class (by name; NULL is the first class) from the next plan on, or
 * as it is taken in if still queued; it keeps its arrival time, progress and
 * KV (Scheduler::SetPriority / SetWorkClass in hearth/scheduler/scheduler.h
 * says what a new class brings). Like cancel, OK means recorded: a request
 * that ends first ends as it would have. NOT_FOUND for unknown, ended or
 * cancelled ids and unknown class names; INVALID_ARGUMENT for a class whose
 * hard KV budget could never hold the request. */
HEARTH_C_API hearth_status hearth_scheduler_set_priority(hearth_scheduler* scheduler,
                                                         uint64_t id, int32_t priority,
                                                         hearth_error** error);
HEARTH_C_API hearth_status hearth_scheduler_set_work_class(hearth_scheduler* scheduler,
                                                           uint64_t id, const char* work_class,
                                                           hearth_error** error);

/* Any thread. Registers a model or an adapter while the scheduler runs
 * (Scheduler::AddModel in hearth/scheduler/scheduler.h says what is checked,
 * how it loads and that ids are never reused). `model_json` is one object
 * with the keys of an options "models" entry, e.g.
 * {"name": "ana-lora", "base_model": "llama", "weights_bytes": 67108864}.
 * Requests name it by its name; its index in the plan's model commands is
 * written to *model_out (NULL: not written). INVALID_ARGUMENT names the key
 * or field that is wrong (or a name in use); RESOURCE_EXHAUSTED once the
 * scheduler's 4,096 model ids are taken. */
HEARTH_C_API hearth_status hearth_scheduler_add_model(hearth_scheduler* scheduler,
                                                      const char* model_json,
                                                      uint32_t* model_out,
                                                      hearth_error** error);
/* Any thread. Unregisters the model of that name (Scheduler::RemoveModel):
 * FAILED_PRECONDITION while a request of it has not ended or an adapter of
 * it is registered; NOT_FOUND for a name no registered model has. With
 * residency the next plan unloads it. */
HEARTH_C_API hearth_status hearth_scheduler_remove_model(hearth_scheduler* scheduler,
                                                         const char* model,
                                                         hearth_error** error);

/* Engine thread. When the engine next has work if nothing is submitted or
 * cancelled (Scheduler::NextEventTime): -INFINITY for now (a request is
 * live), a time on the host's clock for a timer (a model's keep-alive),
 * INFINITY for never. */
HEARTH_C_API double hearth_scheduler_next_event_time(
    const hearth_scheduler* scheduler);
/* Engine thread. Returns 1 at once if there is work, else sleeps until a
 * submit, cancel or wake comes (1) or `timeout_s` seconds of wall-clock time
 * pass (0; INFINITY waits for work only, 0 or less does not sleep). An idle
 * host passes next_event_time - now. 0 for a NULL scheduler. */
HEARTH_C_API int32_t hearth_scheduler_wait_for_work(
    hearth_scheduler* scheduler, double timeout_s);
/* Any thread. Makes a wait_for_work in progress (or the next) return 1. */
HEARTH_C_API void hearth_scheduler_wake(hearth_scheduler* scheduler);

/* ---- Plan ------------------------------------------------------------- */

/* A read-only view of the outstanding step plan (see OWNERSHIP above). */
typedef struct hearth_plan hearth_plan;

/* Engine thread. Builds the next step at time `now_s` (finite, never going
 * backwards). FAILED_PRECONDITION while a plan awaits its complete (with
 * "overlap_planning" in the options: while two do; each view stays valid
 * until its own complete, and completes go in step order). */
HEARTH_C_API hearth_status hearth_scheduler_plan(hearth_scheduler* scheduler,
                                                 double now_s,
                                                 const hearth_plan** out,
                                                 hearth_error** error);

/* The step number (from 1), or 0 for a NULL plan. */
HEARTH_C_API uint64_t hearth_plan_step(const hearth_plan* plan);
/* Sum of the sequences' num_tokens and draft tokens (the positions the step
 * may compute; StepPlan::num_batched_tokens). */
HEARTH_C_API int32_t hearth_plan_num_batched_tokens(const hearth_plan* plan);

/* One scheduled sequence: compute positions [start_position, start_position
 * + num_tokens) and, when `sample`, sample one token after the last. Block
 * and token arrays point into the plan. */
typedef struct hearth_sequence {
  uint64_t id;
  uint32_t model;
  int32_t start_position;
  int32_t num_tokens;
  /* Booleans, 0 or 1. decode: a one-token decode step. full_block_table:
   * replace the engine's table with block_table (else append new_blocks). */
  int32_t sample;
  int32_t decode;
  int32_t full_block_table;
  const uint32_t* block_table;
  size_t num_block_table;
  const uint32_t* new_blocks;
  size_t num_new_blocks;
  /* Token ids of the positions computed, when the request had token ids. */
  const int32_t* token_ids;
  size_t num_token_ids;
  /* The request's hearth_request.handle. */
  uint64_t handle;
} hearth_sequence;

/* What a plan lists. The engine applies it in this order (the same text as
 * in hearth/scheduler/step_plan.h and README.md): 1. released and preempted:
 * drop engine-side state of those requests (a swap preemption's blocks are
 * still read by 2); 2. swap-outs (device -> host); 3. swap-ins (host ->
 * device); 4. copy-on-writes (device -> device); 5. model commands, in list
 * order (an unload frees the memory of the loads after it); 6. encoder
 * frees, then the encoder inputs with kind 1 (the encoder writes entries
 * the frees may just have given back); then it runs the sequences. An
 * empty plan is completed like any other; voided (overlap) is read last,
 * just before complete. */
typedef enum hearth_plan_list {
  HEARTH_PLAN_SEQUENCES = 0,
  HEARTH_PLAN_PREEMPTED = 1,
  HEARTH_PLAN_RELEASED = 2,
  HEARTH_PLAN_SWAP_OUT = 3,
  HEARTH_PLAN_SWAP_IN = 4,
  HEARTH_PLAN_COPY_ON_WRITE = 5,
  HEARTH_PLAN_MODEL_COMMANDS = 6,
  /* Overlapped planning: requests whose sequences in this plan became moot
   * while it was outstanding (StepPlan::voided); their outcomes are read
   * only for the id and the accepted drafts' count. Final when this plan
   * is completed: read it just
   * before hearth_scheduler_complete. */
  HEARTH_PLAN_VOIDED = 7,
  /* Multimodal prompts (StepPlan::encoder_inputs): every encoder span this
   * step's sequences compute; the model reads encoder cache entry `source`
   * at the span's positions, after encoding into it first when kind is 1.
   * A sequence reading an entry the engine holds no output in must fail
   * (its outcome's error). */
  HEARTH_PLAN_ENCODER_INPUTS = 8,
  /* Encoder cache entries (`source`) the engine frees before this step's
   * encodes (StepPlan::encoder_frees). */
  HEARTH_PLAN_ENCODER_FREES = 9
} hearth_plan_list;

/* Entries in one list (0 for a NULL plan or an unknown list). */
HEARTH_C_API size_t hearth_plan_count(const hearth_plan* plan,
                                      hearth_plan_list list);

/* Sequence `index` of HEARTH_PLAN_SEQUENCES. OUT_OF_RANGE past the end. */
HEARTH_C_API hearth_status hearth_plan_sequence(const hearth_plan* plan,
                                                size_t index,
                                                hearth_sequence* out,
                                                hearth_error** error);

/* Draft tokens sequence `index` may verify (ScheduledSequence::draft_tokens,
 * with "max_draft_tokens" in the options): positions start_position + 1
 * onward, covered by its block table. 0 past the end, for a NULL plan, and
 * for every sequence that is not a speculative decode. Kept out of
 * hearth_sequence so that struct's layout stays as it was. */
HEARTH_C_API int32_t hearth_plan_sequence_draft_tokens(const hearth_plan* plan,
                                                       size_t index);

/* 1 when sequence `index` is a decode planned ahead whose input token is
 * the one the previous step samples for it (ScheduledSequence::
 * input_pending, with "overlap_planning"): it has no token_ids, and the
 * engine feeds that token from its own output. 0 otherwise, past the end
 * and for a NULL plan. */
HEARTH_C_API int32_t hearth_plan_sequence_input_pending(const hearth_plan* plan,
                                                        size_t index);

/* Every HEARTH_SEQUENCE_* bit of sequence `index` (the booleans of
 * hearth_sequence, input_pending and the embedding bits), the same byte
 * hearth_plan_arrays.flags holds; 0 past the end and for a NULL plan. */
HEARTH_C_API uint32_t hearth_plan_sequence_flags(const hearth_plan* plan, size_t index);

/* An entry of PREEMPTED, RELEASED, SWAP_OUT, SWAP_IN, COPY_ON_WRITE,
 * MODEL_COMMANDS, VOIDED, ENCODER_INPUTS or ENCODER_FREES. id: the request (0
 * for model commands and encoder frees). kind: for PREEMPTED 0 = recompute,
 * 1 = swap; for MODEL_COMMANDS 0 = load, 1 = unload; for ENCODER_INPUTS
 * 1 = encode first, 0 = already held; else 0. For ENCODER_INPUTS and
 * ENCODER_FREES source is the encoder cache entry, and for ENCODER_INPUTS
 * target is the span's index in hearth_request.encoder_spans. source/target: the copy's blocks (swap_out: device ->
 * host; swap_in: host -> device; copy_on_write: device -> device); for
 * MODEL_COMMANDS source is the model index; for PREEMPTED source is the
 * cause (0 = the scheduler's, 1 = the engine's out-of-KV report, 2 = a retry
 * of an engine failure). handle: the request's hearth_request.handle for
 * PREEMPTED, RELEASED and VOIDED, else 0. */
typedef struct hearth_plan_entry {
  uint64_t id;
  int32_t kind;
  uint32_t source;
  uint32_t target;
  uint64_t handle;
} hearth_plan_entry;

HEARTH_C_API hearth_status hearth_plan_entry_at(const hearth_plan* plan,
                                                hearth_plan_list list,
                                                size_t index,
                                                hearth_plan_entry* out,
                                                hearth_error** error);

/* ---- The plan as arrays: one call per step --------------------------- */

/* Bits of hearth_plan_arrays.flags, one byte per sequence (the booleans of
 * hearth_sequence, and hearth_plan_sequence_input_pending). */
#define HEARTH_SEQUENCE_SAMPLE 1u
#define HEARTH_SEQUENCE_DECODE 2u
#define HEARTH_SEQUENCE_FULL_BLOCK_TABLE 4u
#define HEARTH_SEQUENCE_INPUT_PENDING 8u
/* An embedding's chunk (nothing is sampled; keep what its pooling needs of
 * the final hidden states), its pooling is the mean (the engine sums every
 * position from 0; a chunk starting at 0 starts a new sum), and the chunk
 * that reaches the prompt's end (pool the vector after its last position).
 * ScheduledSequence::embed, mean_pool and pool. */
#define HEARTH_SEQUENCE_EMBED 16u
#define HEARTH_SEQUENCE_MEAN_POOL 32u
#define HEARTH_SEQUENCE_POOL 64u

/* A whole plan in one call, for hosts that pay per foreign call (Python,
 * Go) or want the batch as columns: sequences as a struct of arrays, every
 * other list but VOIDED as an array of hearth_plan_entry (the same entries
 * hearth_plan_entry_at gives). Every pointer lives until the plan's
 * complete; arrays of 0 entries may be NULL.
 *
 * Layout: fields are only ever added at the end; a caller passes the size
 * it was compiled with and fields past it are not written. */
typedef struct hearth_plan_arrays {
  uint64_t step;
  int32_t num_batched_tokens;
  int32_t num_decodes;
  /* Sequence i of HEARTH_PLAN_SEQUENCES is entry i of each array. */
  size_t num_sequences;
  const uint64_t* id;
  const uint64_t* handle;
  const uint32_t* model;
  const int32_t* start_position;
  const int32_t* num_tokens;
  const int32_t* draft_tokens;
  const uint8_t* flags; /* HEARTH_SEQUENCE_* bits */
  /* What sequence i's engine-side block table gains this step, flattened:
   * blocks[block_offset[i] .. block_offset[i + 1]) are its new blocks, or
   * its whole table when FULL_BLOCK_TABLE (which then replaces the
   * engine's). num_sequences + 1 offsets; O(new blocks) per step. */
  const uint32_t* blocks;
  const uint64_t* block_offset;
  /* Sequence i's whole table after this step, in place (not copied):
   * block_table[i][0 .. num_block_table[i]). */
  const uint32_t* const* block_table;
  const uint64_t* num_block_table;
  /* Token ids of the positions computed, for requests submitted with token
   * ids: token_ids[token_offset[i] .. token_offset[i + 1]). */
  const int32_t* token_ids;
  const uint64_t* token_offset;
  /* The other lists (apply order above), each as hearth_plan_entry. */
  size_t num_preempted;
  const hearth_plan_entry* preempted;
  size_t num_released;
  const hearth_plan_entry* released;
  size_t num_swap_out;
  const hearth_plan_entry* swap_out;
  size_t num_swap_in;
  const hearth_plan_entry* swap_in;
  size_t num_copy_on_write;
  const hearth_plan_entry* copy_on_write;
  size_t num_model_commands;
  const hearth_plan_entry* model_commands;
  /* Multimodal prompts: ENCODER_INPUTS and ENCODER_FREES, and the span
   * positions this step encodes (StepPlan::num_encoder_tokens). */
  size_t num_encoder_inputs;
  const hearth_plan_entry* encoder_inputs;
  size_t num_encoder_frees;
  const hearth_plan_entry* encoder_frees;
  int32_t num_encoder_tokens;
} hearth_plan_arrays;

/* Fills *out (its first `out_size` bytes; pass sizeof(hearth_plan_arrays))
 * with `plan` as arrays. The first call for a plan builds them, O(sequences
 * + new blocks + token ids + list entries), keeping capacity so that a
 * steady state allocates nothing; later calls for it are O(1).
 * FAILED_PRECONDITION for a completed plan; INVALID_ARGUMENT for an
 * out_size below offsetof(hearth_plan_arrays, id). VOIDED is not included:
 * it may grow until just before complete (read it then with
 * hearth_plan_entry_at). */
HEARTH_C_API hearth_status hearth_plan_get_arrays(const hearth_plan* plan,
                                                  hearth_plan_arrays* out,
                                                  size_t out_size,
                                                  hearth_error** error);

/* ---- Outcome ---------------------------------------------------------- */

/* Why a request finished. The engine reports STOP_TOKEN or STOP_STRING;
 * LENGTH and POOLED (an embedding's vector computed) are the scheduler's own
 * decisions. */
typedef enum hearth_finish_reason {
  HEARTH_FINISH_NONE = 0,
  HEARTH_FINISH_STOP_TOKEN = 1,
  HEARTH_FINISH_STOP_STRING = 2,
  HEARTH_FINISH_LENGTH = 3,
  HEARTH_FINISH_POOLED = 4
} hearth_finish_reason;

/* What the engine did with a plan: one entry per planned sequence, in plan
 * order. Reusable: hearth_outcome_begin() clears it for the next plan. */
typedef struct hearth_outcome hearth_outcome;

HEARTH_C_API hearth_status hearth_outcome_new(hearth_outcome** out,
                                              hearth_error** error);
HEARTH_C_API void hearth_outcome_free(hearth_outcome* outcome);

/* Clears `outcome` and addresses it to `plan`'s step. */
HEARTH_C_API hearth_status hearth_outcome_begin(hearth_outcome* outcome,
                                                const hearth_plan* plan,
                                                hearth_error** error);
/* When the step finished (>= the plan's now); not calling it means the
 * plan's now. NaN and infinities are INVALID_ARGUMENT. */
HEARTH_C_API hearth_status hearth_outcome_set_completed_at(
    hearth_outcome* outcome, double completed_at_s, hearth_error** error);
/* The next sequence ran: produced_token must equal the plan's `sample`;
 * `token` is the sampled id; `finish` STOP_TOKEN / STOP_STRING ends it. */
HEARTH_C_API hearth_status hearth_outcome_add(hearth_outcome* outcome,
                                              uint64_t id,
                                              int32_t produced_token,
                                              int32_t token,
                                              hearth_finish_reason finish,
                                              hearth_error** error);
/* The next sequence was a speculative decode: `accepted` of its drafts
 * (0 .. its draft tokens) were verified, with ids `drafts[0 .. accepted)`,
 * and `token` was sampled after them (finish as for hearth_outcome_add).
 * `drafts` may be NULL when `accepted` is 0. */
HEARTH_C_API hearth_status hearth_outcome_add_speculative(hearth_outcome* outcome,
                                                          uint64_t id,
                                                          const int32_t* drafts,
                                                          size_t accepted, int32_t token,
                                                          hearth_finish_reason finish,
                                                          hearth_error** error);
/* The next sequence failed in the engine (retried up to its class's
 * max_retries, then ended as failed with `message`). */
HEARTH_C_API hearth_status hearth_outcome_add_failed(hearth_outcome* outcome,
                                                     uint64_t id,
                                                     const char* message,
                                                     hearth_error** error);
/* The next sequence did not run: the engine had no KV memory for it. The
 * scheduler preempts it by recompute (same id, no failure recorded). */
HEARTH_C_API hearth_status hearth_outcome_add_out_of_kv(hearth_outcome* outcome,
                                                        uint64_t id,
                                                        hearth_error** error);
/* A model load of the plan's MODEL_COMMANDS failed. */
HEARTH_C_API hearth_status hearth_outcome_add_failed_load(
    hearth_outcome* outcome, uint32_t model, const char* message,
    hearth_error** error);
/* Appends `count` entries at once, as `count` hearth_outcome_add calls
 * would: entry k is
 *   ids[k]       NULL: the plan's sequences in order, starting at the first
 *                this outcome has no entry for yet;
 *   produced[k]  0 or 1; NULL: whether the plan samples that sequence
 *                (with ids NULL only);
 *   tokens[k]    read where produced; NULL when nothing is produced;
 *   finish[k]    a hearth_finish_reason (NONE, STOP_TOKEN or STOP_STRING);
 *                NULL: all NONE.
 * Every argument is checked before anything is appended: on an error the
 * outcome is as it was. A NULL ids or produced needs the outcome begun for
 * a plan still outstanding, and `count` entries left in it. */
HEARTH_C_API hearth_status hearth_outcome_add_arrays(hearth_outcome* outcome,
                                                     size_t count,
                                                     const uint64_t* ids,
                                                     const uint8_t* produced,
                                                     const int32_t* tokens,
                                                     const uint8_t* finish,
                                                     hearth_error** error);
/* Begins `outcome` for `plan` and adds every sequence as run without a
 * finish: a token (id 0) wherever the plan samples. For simulations and
 * tests; a real engine reports its own tokens. */
HEARTH_C_API hearth_status hearth_outcome_fill_from_plan(
    hearth_outcome* outcome, const hearth_plan* plan, hearth_error** error);

/* Engine thread. Applies the outcome of the outstanding plan. A mismatch
 * (step, count, ids, order, a token where none was sampled) is
 * INVALID_ARGUMENT and applies nothing: the plan stays outstanding and
 * valid, so the engine may retry with a corrected outcome. */
HEARTH_C_API hearth_status hearth_scheduler_complete(
    hearth_scheduler* scheduler, const hearth_outcome* outcome,
    hearth_error** error);

/* ---- Results ---------------------------------------------------------- */

typedef enum hearth_phase {
  HEARTH_PHASE_QUEUED = 0,
  HEARTH_PHASE_PREPARING = 1,
  HEARTH_PHASE_WAITING = 2,
  HEARTH_PHASE_RUNNING = 3,
  HEARTH_PHASE_SWAPPED = 4,
  /* Terminal: every accepted request ends in exactly one of these. */
  HEARTH_PHASE_FINISHED = 5,
  HEARTH_PHASE_CANCELLED = 6,
  HEARTH_PHASE_REJECTED = 7,
  HEARTH_PHASE_TIMED_OUT = 8,
  HEARTH_PHASE_FAILED = 9,
  /* Submitted with hearth_request.hold, not released (not terminal; numbered
   * after the terminal phases, which keep their numbers). */
  HEARTH_PHASE_HELD = 10
} hearth_phase;

/* "finished", "cancelled", ...; "unknown" outside the enum. Static. */
HEARTH_C_API const char* hearth_phase_name(hearth_phase phase);

/* Terminal results taken by one hearth_scheduler_drain(). */
typedef struct hearth_results hearth_results;

/* One ended request. Strings point into the results object (valid until
 * hearth_results_free); times are INFINITY for events that never happened
 * (a request cancelled while waiting has no first token). */
typedef struct hearth_result {
  uint64_t id;
  const char* user;
  const char* work_class;
  const char* label;
  hearth_phase phase;
  hearth_finish_reason finish_reason;
  /* Why it ended, for every phase but FINISHED ("" then). */
  const char* message;
  int32_t prompt_tokens;
  int32_t output_tokens;
  int32_t cached_prompt_tokens;
  int32_t preemptions;
  int32_t retries;
  double arrival_time_s;
  double first_admit_time_s;
  double first_token_time_s;
  double end_time_s;
  /* The request's hearth_request.handle. */
  uint64_t handle;
} hearth_result;

/* Any thread. Moves every result that ended since the last drain into a new
 * results object (*out, possibly empty), exactly once per request. */
HEARTH_C_API hearth_status hearth_scheduler_drain(hearth_scheduler* scheduler,
                                                  hearth_results** out,
                                                  hearth_error** error);
/* Results held (0 for NULL). */
HEARTH_C_API size_t hearth_results_count(const hearth_results* results);
HEARTH_C_API hearth_status hearth_results_get(const hearth_results* results,
                                              size_t index,
                                              hearth_result* out,
                                              hearth_error** error);
HEARTH_C_API void hearth_results_free(hearth_results* results);

/* ---- Stats and metrics ------------------------------------------------ */

/* Counts at the last plan or complete (SchedulerStats). */
typedef struct hearth_stats {
  uint64_t steps;
  int32_t queued;
  int32_t waiting;
  int32_t preparing;
  int32_t running;
  int32_t swapped;
  int32_t free_device_blocks;
  int32_t cached_device_blocks;
  int32_t kv_block_limit;
  int32_t free_host_blocks;
  int64_t resident_weight_bytes;
  uint64_t prefix_hit_tokens;
  /* Every cause but retries; out-of-KV reports also counted apart. */
  uint64_t preemptions;
  uint64_t finished;
  uint64_t engine_out_of_kv_preemptions;
  uint64_t retries;
} hearth_stats;

/* Engine thread. */
HEARTH_C_API hearth_status hearth_scheduler_stats(
    const hearth_scheduler* scheduler, hearth_stats* out,
    hearth_error** error);
/* Any thread: the stats as of the last plan or complete that returned. */
HEARTH_C_API hearth_status hearth_scheduler_published_stats(
    const hearth_scheduler* scheduler, hearth_stats* out,
    hearth_error** error);

/* What the built-in metrics collector measured, for the whole run or one
 * user or class (seconds; tokens as counts). */
typedef struct hearth_metrics {
  uint64_t arrived;
  uint64_t finished;
  uint64_t cancelled;
  uint64_t rejected;
  uint64_t timed_out;
  uint64_t failed;
  int64_t prefill_tokens;
  int64_t output_tokens;
  /* VTC's cost (prefill_weight * prefill + decode_weight * decode), and that
   * divided by the user's weight. */
  double weighted_service;
  double normalized_service;
  double ttft_mean_s;
  double ttft_p99_s;
  double queue_wait_mean_s;
  double e2e_mean_s;
  /* Run-wide only (0 in a user's or class's): Jain's index over users'
   * normalised service, and VTC's largest service difference between two
   * backlogged users (-1 when not tracked: more users than max_gap_users). */
  double jain_index;
  double max_backlogged_service_gap;
  uint64_t steps;
} hearth_metrics;

/* Engine thread. `group` NULL: the whole run; else "user:<name>" or
 * "class:<name>" (NOT_FOUND otherwise). FAILED_PRECONDITION when the
 * options turned metrics off. */
HEARTH_C_API hearth_status hearth_scheduler_metrics(hearth_scheduler* scheduler,
                                                    const char* group,
                                                    hearth_metrics* out,
                                                    hearth_error** error);

/* Engine thread. The Prometheus text exposition (format 0.0.4) of the
 * collector's report and the scheduler's current gauges
 * (hearth/metrics/prometheus.h lists the families). router_names: also the
 * vllm:* names routers read, labelled model_name (NULL: "hearth").
 * *out_text is the caller's (hearth_string_free); *out_length (may be NULL)
 * its length without the NUL. FAILED_PRECONDITION when the options turned
 * metrics off (*out_text stays NULL). */
HEARTH_C_API hearth_status hearth_scheduler_prometheus_text(
    hearth_scheduler* scheduler, int32_t router_names, const char* model_name,
    char** out_text, size_t* out_length, hearth_error** error);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* HEARTH_C_HEARTH_H_ */

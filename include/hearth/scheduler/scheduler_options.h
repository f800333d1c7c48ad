// File: hearth/scheduler/scheduler_options.h
//
// Everything a Scheduler is configured with, fixed at Scheduler::Create().
// Create() validates all of it and says which field is wrong and what is
// allowed. Fields are grouped as in LevelDB's options.h: what changes
// behaviour, then what changes only performance.

#ifndef HEARTH_SCHEDULER_SCHEDULER_OPTIONS_H_
#define HEARTH_SCHEDULER_SCHEDULER_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hearth/policy/policy.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth {

class MetricsSink;

struct ModelConfig {
  // Unique; a valid name (hearth/common/names.h: 1 to 256 bytes of UTF-8,
  // no control characters).
  std::string name = "default";
  // Maximum sequence length (prompt + generated tokens). Must be in
  // [2, 2^30].
  int32_t context_length = 8192;
  // When > 0, submitted token ids must lie in [0, vocab_size).
  int32_t vocab_size = 0;
  // KV bytes per token: layers * kv_heads * head_dim * 2 * dtype bytes.
  // Sizes caches (see KvBlocksForMemory); required (> 0) with residency.
  // Must be in [0, 2^40].
  int64_t kv_bytes_per_token = 0;

  // --- Residency (only when ResidencyConfig::device_memory_bytes > 0).
  // Device bytes the model's weights occupy while resident. Must be >= 0.
  int64_t weights_bytes = 0;
  // Resident from the start (the preloaded models must fit together).
  bool preload = true;
  // Unloaded once idle (no unfinished requests) this long, as Ollama's
  // keep-alive does. InfiniteDuration: unloaded only when memory is needed.
  absl::Duration keep_alive = absl::InfiniteDuration();

  // --- Adapters. Non-empty: this entry is an adapter (a LoRA, say one per
  // member) of the base model of that name, which must be a base model
  // itself. A request names the adapter as its model. The adapter shares
  // the base's KV layout (kv_bytes_per_token and vocab_size 0 or the
  // base's; a 0 reads as the base's in Scheduler::options(); context_length
  // at most the base's) but not its prefix cache, since its K/V differ;
  // weights_bytes is the adapter's own size. With residency it is loaded
  // only once its base is ready; a request of it holding KV keeps the base
  // resident, one only waiting keeps it as a busy model does (unloaded only
  // when memory is needed, the request going back to preparation); and
  // unloading the base unloads the adapter first
  // (ResidencyConfig::max_resident_adapters and max_adapters_per_step bound
  // adapters).
  std::string base_model;
};

// Model residency: several models share the device's memory with the KV
// cache. Requests for a model that is not resident wait in a preparation
// queue apart from runnable work (they never delay requests of resident
// models, as in Bidaw); loads are issued as plan commands, a bounded number
// at a time, after evicting idle models least recently used first. KV blocks
// are limited to the memory left after resident weights. A load takes only
// memory that requests holding KV do not need to reach their full length;
// base models load in request order, adapters as soon as their base is
// ready and they fit; a base kept only by requests waiting for one of its
// adapters to load may be unloaded for another model. So no order of
// requests leaves one waiting forever for a model.
//
// The engine performs a step's model commands before its forward pass; a
// load counts as done when Complete() answers that plan without listing it
// in StepOutcome::failed_loads. The host's KV pool is allocated for
// kv.num_device_blocks; residency caps how many of them may be held at once.
struct ResidencyConfig {
  // Device memory for weights plus KV. 0 disables residency: every model is
  // resident and the KV cache is kv.num_device_blocks.
  int64_t device_memory_bytes = 0;
  // Loads in one step. Must be >= 1.
  int32_t max_concurrent_loads = 1;
  // Adapters (ModelConfig::base_model) resident at once, like an engine's
  // adapter slots: loading one more first unloads an idle adapter, least
  // recently used; with none idle the load waits. 0: no limit but memory.
  int32_t max_resident_adapters = 0;
  // Distinct adapters among the running requests, so in any step's batch
  // (as vLLM's max_loras): a request of another adapter is not admitted
  // until one of them has no running request left, and the policy's first
  // candidate held back this way holds the line for that step. Applies with
  // residency off too. 0: no limit.
  int32_t max_adapters_per_step = 0;
};

struct UserConfig {
  // Unique; a valid name (hearth/common/names.h), not kOtherUsersName
  // ("_other", the Prometheus series of users beyond max_user_series).
  std::string name = "default";
  // Share weight for fairness policies. Must be in (0, 1e9].
  double weight = 1.0;
  // Unfinished requests this user may have at once; Submit beyond it returns
  // ResourceExhausted. 0 means no limit beyond the user's part of
  // SchedulerOptions::max_pending_requests (see reserved_pending_share).
  int32_t max_queued_requests = 0;
  // Tokens (prompt + max_new_tokens, refunded down to the tokens actually
  // generated when a request ends) this user may submit per `quota_window`;
  // Submit beyond it returns ResourceExhausted. 0 means no quota.
  int64_t token_quota = 0;
  // Length of a quota window; windows are aligned to the Unix epoch. A
  // request is charged to the window of the Plan() that takes it in (its
  // stamped arrival time plays no part, so no stamp can move a window), and
  // Submit judges against the window of the latest Plan(). Must be > 0 and
  // finite.
  absl::Duration quota_window = absl::Hours(24);
};

// A household work class: its own share of the engine, its own patience.
// Limits are entitlements, not walls: a class with `borrow` may run beyond
// them on capacity nobody else is using, and such borrowed sequences are the
// first to be preempted when a class within its entitlement needs room.
struct WorkClassConfig {
  // Unique; a valid name (hearth/common/names.h).
  std::string name = "default";
  // Higher is more urgent. Priority-ranking policies add it to each request's
  // RequestSpec::priority (see RequestView::priority).
  int32_t priority = 0;
  // Sequences of this class running at once; 0 means no cap. Must be >= 0.
  int32_t max_running = 0;
  // Device KV blocks this class's running sequences may hold; 0 means no
  // budget. Must be in [0, kv.num_device_blocks].
  int32_t kv_block_budget = 0;
  // Whether the class may exceed `max_running` / `kv_block_budget` on idle
  // capacity (work-conserving). Without it the limits are hard.
  bool borrow = true;
  // How long a request may wait for its first admission before it ends as
  // timed out. InfiniteDuration means forever; otherwise must be > 0.
  absl::Duration queue_timeout = absl::InfiniteDuration();
  // Engine-reported failures retried (from scratch: blocks freed, prefix
  // recomputed) before the request ends as failed. Must be in [0, 100].
  int32_t max_retries = 0;
  // Share weight for policies that share the engine between classes (the
  // class-shares tree). Must be in (0, 1e9].
  double weight = 1.0;
  // Time-to-first-token target, from arrival. The SLO-aware class level
  // (ClassLevel::kSlo, the household preset) admits each request of a class
  // with a target by its deadline, arrival + ttft_slo, and a class without
  // one (InfiniteDuration, the default) is background work: admitted only
  // behind every class with one, unless it waited PriorityQuotaOptions::
  // aging_interval, and its prefill limited to the preset's
  // PolicyTreeConfig::background_prefill_tokens (128) a step while anything
  // decodes. Other policies ignore it. A request may set its own (RequestSpec::ttft_slo). Must be
  // > 0 and at most kMaxSloTarget (request_spec.h), or InfiniteDuration.
  absl::Duration ttft_slo = absl::InfiniteDuration();
  // Time-per-output-token target (mean gap between a request's tokens).
  // While a request of a class with a target runs, each step's token budget
  // is cut so that the step's predicted time (SchedulerOptions::
  // step_time_model) keeps the tightest running target: prefill chunks
  // shrink, decodes still all run. InfiniteDuration (the default): none.
  // The budget follows class targets only; a request's own target
  // (RequestSpec::tpot_slo) is judged in metrics but does not cut steps.
  // Must be > 0 and at most kMaxSloTarget, or InfiniteDuration.
  absl::Duration tpot_slo = absl::InfiniteDuration();
  // Completion target for a class without a TTFT target (background work:
  // a document summary due within five minutes), from arrival. In the
  // SLO-aware class level (the household preset) such a request is due once
  // a quarter of it has passed: until the target passes it then goes ahead
  // of on-time interactive work and is no longer held to the room kept for
  // interactive arrivals (PolicyTreeConfig::background_kv_reserve), so it
  // starts with three quarters of its target left, unless its member has
  // most of the waiting requests (the member guard: one member's flood of
  // documents does not rank ahead of everyone's chats). Once the target has
  // passed it ranks by its aging interval again. Ignored for a class with a
  // TTFT target and by other policies; metrics judge it only through
  // MetricsOptions::class_slos. Must be > 0 and at most kMaxSloTarget, or
  // InfiniteDuration (the default: none).
  absl::Duration e2e_slo = absl::InfiniteDuration();
};

// A step's time as a line in the tokens it batches: fixed + per_token x
// tokens. See SchedulerOptions::step_time_model.
struct StepTimeModel {
  // Must be >= 0 and finite.
  absl::Duration fixed = absl::ZeroDuration();
  // Zero: the scheduler fits the line itself from the steps it has seen
  // (StepOutcome::completed_at minus the plan's now), and cuts no budget
  // until token counts have varied enough to fit a slope. Must be >= 0 and
  // finite.
  absl::Duration per_token = absl::ZeroDuration();
};

// The default household: voice above chat above agents above embeddings
// above maintenance. Voice is small and impatient; maintenance runs on what
// is left. Fields not listed keep WorkClassConfig's defaults (no KV budget,
// borrowing on, no queue timeout, no TPOT or completion target):
//   class        priority  max_running  ttft_slo  queue_timeout  max_retries
//   voice        4         8            500 ms    10 s           1
//   chat         3         no cap       2 s       none           1
//   agent        2         32           5 s       none           2
//   embedding    1         16           none      none           2
//   maintenance  0         4            none      none           3
// embedding and maintenance have no TTFT target, so the household preset
// runs them as background work (WorkClassConfig::ttft_slo).
std::vector<WorkClassConfig> HouseholdWorkClasses();

struct KvCacheConfig {
  // Tokens per block. Must be in [1, 4096]; 16 is what most engines use.
  int32_t block_size = 16;
  // Device blocks. Must be in [1, 2^24] (the scheduler keeps about 22 bytes
  // per block).
  int32_t num_device_blocks = 4096;
  // Host blocks for swap preemption; 0 disables swap (recompute only). Must
  // be in [0, 2^24].
  int32_t num_host_blocks = 0;
  // Blocks kept free at admission so running sequences can grow without
  // immediate preemption. Admission needs free blocks >= need + watermark.
  int32_t watermark_blocks = 0;
  // Tokens of growth kept free per decoding sequence at admission, beside
  // the watermark: every decoding sequence takes a new block each
  // block_size steps, so an admission that fills the cache makes them evict
  // each other within a few steps (each eviction recomputing a context).
  // Admission needs free blocks >= need + watermark + ceil(decoding
  // sequences x this / block_size). Near capacity 64 removed nearly all of
  // FIFO's preemptions at the same TTFT (figures: bench/RESULTS.md, "Figures
  // behind the rules"). Must be in [0, 2^20]; 0: the watermark alone.
  int32_t growth_headroom_tokens = 64;
  // Reuse KV of identical full prompt blocks (needs token ids in requests),
  // within a request's cache scope (RequestSpec::cache_scope: by default its
  // member's own).
  bool enable_prefix_caching = true;
  // Secret mixed into every scope's first block hash; any value. Block
  // hashes are 64-bit and fast, not collision-resistant against chosen
  // inputs: with a key known to a member (the default 0 is), that member
  // could compute another scope's chain for a guessed prompt and craft
  // tokens whose chain in its own scope collides with it, reusing (and so
  // detecting) another member's blocks. Hosts whose members choose prompt
  // tokens set a random key per process (hearth-serve does); the same key
  // gives the same plans, so simulations keep the default.
  uint64_t prefix_hash_key = 0;
};

// Device blocks that fit `kv_memory_bytes` for a model with
// `kv_bytes_per_token` and the given block size (floor; in [0, 2^24]).
int32_t KvBlocksForMemory(int64_t kv_memory_bytes, int64_t kv_bytes_per_token,
                          int32_t block_size);

struct SchedulerOptions {
  // ---- Behaviour.

  // Registries. Requests name entries by index (ModelId, UserId, WorkClassId);
  // each must be non-empty.
  std::vector<ModelConfig> models = {ModelConfig{}};
  std::vector<UserConfig> users = {UserConfig{}};
  std::vector<WorkClassConfig> work_classes = {WorkClassConfig{}};

  KvCacheConfig kv;
  ResidencyConfig residency;

  // Builds the policy that orders admissions and preemption victims, once,
  // in Scheduler::Create, from these options (so user weights and class
  // priorities reach it without the host copying them). Null means the
  // "household" policy (policy_registry.h): classes by TTFT deadline
  // (WorkClassConfig::ttft_slo), users by virtual token counter, so one
  // member's flood cannot queue everyone else behind it. For arrival order:
  // `[](const SchedulerOptions&) { return NewFifoPolicy(); }` (policy/fifo.h),
  // or what MakePolicyFactory("fifo", {}) returns (policy_registry.h).
  PolicyFactory policy_factory;

  // How running sequences are preempted when decode growth cannot be met.
  // kSwap needs kv.num_host_blocks > 0 and falls back to recompute when the
  // host tier is full or when recomputing the victim's positions costs less
  // than moving its blocks (swap_block_cost_tokens).
  PreemptionMode preemption_mode = PreemptionMode::kRecompute;

  // What copying one KV block to the host and back costs, in prefill tokens'
  // worth of engine time. Prices a swap against a recompute (a victim's
  // computed positions), both when choosing the mode and when choosing among
  // the victims a policy offers. Moving 16 tokens of an 8B model's KV over
  // PCIe 4 and back takes about as long as prefilling one token, hence 1.
  // Must be >= 0 and finite.
  double swap_block_cost_tokens = 1.0;

  // A waiting request may evict a running one (when its policy offers
  // victims for admission) only if the work thrown away is at most this many
  // blocks' worth of prefill per block the admission needs (its first chunk
  // and the rest of its prefill, which admission reserves at once). A voice call
  // needing ten blocks may then evict a chat with up to 160 blocks of
  // context, not a document of thousands, which would be recomputed
  // (slowing every step meanwhile) and come back to be evicted again. Decode
  // growth is not limited by it. Must be >= 0 and finite; 0 forbids
  // preemption for admission.
  double max_admission_waste_per_block = 16.0;

  // Predicts step time for the TPOT-aware budget (WorkClassConfig::tpot_slo);
  // unused while no class has a TPOT target. Default: fitted online.
  StepTimeModel step_time_model;

  // A request preempted this many times is no longer offered as a victim
  // for another request (it still yields its own memory when it cannot
  // grow), so repeated preemption of one request is bounded. Must be >= 1.
  int32_t max_preemptions_per_request = 3;

  // An engine that reports a request out of KV (SequenceOutcome::
  // out_of_kv) this many times without it producing a token in between
  // fails the request (kFailed, the message naming the count): its context
  // may not fit the engine's own cache (a smaller n_ctx than Hearth's pool),
  // and recomputing it forever would cost every other request a prefill
  // each round. Generous by default: an engine whose cache is a little
  // smaller than Hearth's pool also refuses requests that fit once others
  // finish (size kv.num_device_blocks to the engine's cache to avoid both).
  // In [1, 1000000].
  int32_t max_out_of_kv_reports = 32;

  // Speculative decoding: each decode may carry up to this many draft
  // tokens for the engine to verify (ScheduledSequence::draft_tokens). A
  // decode's drafts count against max_batched_tokens beside its one token,
  // but only from what the step has left once every decode, continuing
  // prefill, admission and model load has its tokens and memory (blocks
  // beyond the watermark, never by preemption), and never past the
  // request's max_new_tokens or its model's context; blocks taken for them
  // and those of rejected drafts are given back at Complete. 0 (the default) plans plain decodes. In [0,
  // kMaxDraftTokens].
  int32_t max_draft_tokens = 0;

  // Overlapped planning (vLLM's and SGLang's "async scheduling"): Plan() may
  // be called once more while one plan is outstanding, so the host builds
  // step N+1 while its accelerator runs step N. A sequence that step N
  // samples for may then decode in step N+1 with ScheduledSequence::
  // input_pending set: its input is the token step N samples, which the
  // engine feeds from its own output. A sequence with draft tokens in
  // flight is not planned ahead (its accepted count is unknown: with
  // max_draft_tokens, a decode speculates every other step), nor is one
  // that step N's token ends by its max_new_tokens or context. The next
  // plan may preempt, cancel or time out a sequence of step N; that entry of
  // step N is then voided (StepPlan::voided: its token is dropped and, after
  // a preemption, computed again). Outcomes are completed in step order. The
  // engine must run a plan's commands after the previous plan's forward pass
  // (as one CUDA stream does): blocks a request gave up may be reused by
  // the very next plan.
  // Off (the default): at most one plan is outstanding.
  bool overlap_planning = false;

  // ---- Intake limits. The defaults keep one member from exhausting the
  // house: a flood of submissions can neither fill the queue for everyone
  // else nor stall the engine thread.

  // Requests accepted but not yet terminal, across all users. Submit beyond it
  // returns ResourceExhausted. Must be >= 1. Tables for up to 2^16 requests
  // are reserved at Create; above that, a table growing by doubling can add
  // milliseconds to the one Plan that grows it.
  int32_t max_pending_requests = 1 << 16;
  // Bytes that unfinished requests may hold, across all users: 4 per prompt
  // token id plus the label's length. Submit beyond it returns
  // ResourceExhausted; one request larger than all of it is InvalidArgument.
  // Must be >= 1.
  int64_t max_pending_bytes = int64_t{256} << 20;
  // Fraction of max_pending_requests and of max_pending_bytes reserved for
  // the users, split by UserConfig::weight: a user's reserved part is never
  // taken by others, and a user beyond it may only use the unreserved rest
  // (so with the default one member can hold at most half of either limit
  // plus its own reserved part). 0 makes both limits first come, first
  // served. Must be in [0, 1].
  double reserved_pending_share = 0.5;
  // Submissions one Plan() takes in. The rest wait, in each user's
  // submission order, for the next Plan(); users take turns, so a member who
  // submits a million requests delays another member's request by no step.
  // Bounds the engine thread's intake work per step. Must be in [1, 2^20].
  int32_t max_intake_per_plan = 1024;
  // Prompt labels longer than this are InvalidArgument at Submit. Must be in
  // [0, 2^24].
  int32_t max_label_bytes = 4096;
  // How far a stamped RequestSpec::arrival_time may lie after the `now` of
  // the Plan() that takes the request in. Within it the stamp is clamped to
  // `now` (threads' clocks race); beyond it the request ends as kRejected.
  // Must be >= 0 and finite.
  absl::Duration max_arrival_lead = absl::Seconds(60);

  // How long an ended request is remembered as a possible workflow parent
  // (RequestSpec::parent): a call arriving later than this after its parent
  // ended starts a new workflow. At most the latest max_pending_requests
  // ends are remembered, though never fewer than 1,024 nor more than 65,536
  // (40 bytes each, reserved at Create unless this is zero); a flood of ends
  // forgets the oldest sooner. Must be >= 0; zero means only live parents
  // are joined.
  absl::Duration workflow_retention = absl::Minutes(10);

  // Called on the engine thread, inside Plan/Complete, once per request when it
  // reaches a terminal phase. Must not call back into the scheduler. When set,
  // results are not also queued for DrainResults().
  std::function<void(const RequestResult&)> on_result;

  // Not owned; may be null. Must outlive the scheduler.
  MetricsSink* metrics_sink = nullptr;

  // ---- Performance (and latency/throughput trade-offs).

  // Token budget of one step: decodes plus prefill chunks. Must be in
  // [1, 2^24].
  int32_t max_batched_tokens = 2048;
  // Sequences in one step (running set size). Must be in
  // [1, min(2^20, max_batched_tokens)].
  int32_t max_running = 256;
  // Largest prefill chunk one sequence gets per step; 0 means
  // max_batched_tokens. Smaller chunks interleave long prompts with others.
  int32_t max_prefill_chunk_tokens = 0;
  // Encoder work one step may plan (StepPlan::num_encoder_tokens): the
  // span lengths it encodes, cached encoder output not counted. 0 means
  // max_batched_tokens. Must be in [0, 2^24]; a prompt's longest span must
  // fit it.
  int32_t max_encoder_tokens_per_step = 0;
  // Encoder outputs the engine keeps at once, in span positions
  // (EncoderSpan::length summed over StepPlan's live encoder entries). 0
  // means the resolved max_encoder_tokens_per_step. Must be in [0, 2^24];
  // a prompt's longest span must fit it.
  int32_t encoder_cache_tokens = 0;
  // Candidates the policy may offer that the scheduler declines in one step
  // before admission stops for the step (bounds per-step work).
  int32_t max_admission_declines = 32;
};

}  // namespace hearth

#endif  // HEARTH_SCHEDULER_SCHEDULER_OPTIONS_H_

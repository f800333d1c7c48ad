// File: hearth/request/request_spec.h
//
// `RequestSpec` is the immutable description of one inference request, as a
// host hands it to Scheduler::Submit(). The scheduler copies it; the caller
// keeps ownership of its own object.
//
// Output length is unknown to the scheduler: `max_new_tokens` is only an upper
// bound. The engine reports the real end (stop token, stop string) through
// StepOutcome; the scheduler ends a request at `max_new_tokens` or at the
// model's context length by itself.
//
// Prefix caching is scoped (CacheScope below): by default a request reuses
// and leaves cached KV only within its own member's scope, so one member's
// prompt never reuses, or learns of, another member's.
//
// Example:
//   hearth::RequestSpec spec;
//   spec.user = *scheduler.FindUser("alice");          // NotFound lists the names
//   spec.work_class = *scheduler.FindWorkClass("chat");
//   spec.prompt_tokens = 812;
//   spec.max_new_tokens = 256;
//   // The first 40 tokens are the household's system prompt: cached for all.
//   spec.cache_scope.shared_prefix_tokens = 40;
//   spec.cache_scope.shared_prefix_scope = "household-system-prompt";
//   absl::StatusOr<hearth::RequestId> id = scheduler.Submit(spec);

#ifndef HEARTH_REQUEST_REQUEST_SPEC_H_
#define HEARTH_REQUEST_REQUEST_SPEC_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "hearth/common/ids.h"

namespace hearth {

// The longest finite SLO target a request or work class may set: longer
// targets are configuration mistakes, and bounding them keeps
// arrival + target finite.
inline constexpr absl::Duration kMaxSloTarget = absl::Hours(24 * 365);

// A host's prediction of a request's output length (from a length predictor,
// a client's declared budget, the same prompt seen before). Policies that
// rank by expected job size read it through RequestView (MLFQ's skip-join:
// mlfq.h); the scheduler still ends the request at the real end or at
// max_new_tokens, and a wrong prediction costs ordering quality only.
struct OutputLengthPrediction {
  // Expected generated tokens. 0: no prediction (then the range must be 0
  // and 0 too). Otherwise in [1, RequestSpec::max_new_tokens].
  int32_t expected_tokens = 0;
  // A range the host believes holds the true length (e.g. a predictor's
  // 10th and 90th percentiles): 0 and 0 for none, else
  // 1 <= low_tokens <= expected_tokens <= high_tokens.
  int32_t low_tokens = 0;
  int32_t high_tokens = 0;

  bool has_value() const { return expected_tokens > 0; }
};

// The longest cache scope name (CacheScope::name, shared_prefix_scope), in
// bytes.
inline constexpr size_t kMaxCacheScopeBytes = 256;

// Which cached KV a request may reuse, and who may reuse the KV it leaves
// (RequestSpec::cache_scope).
//
// The prefix cache keys each full block by a chain hash of the tokens up to
// and including it, and a scope enters that chain at its first block: two
// blocks of different scopes never share a hash (up to a 64-bit collision),
// so a request can neither reuse nor find another scope's blocks, and its
// RequestResult::cached_prompt_tokens, metrics and timing cannot tell
// whether another scope sent the same tokens. The swap tier holds private
// copies of one sequence's blocks only, so the scope holds on every tier.
//
// Scope names are the host's, never its members' (a member who picked one
// could name another's), and are compared as bytes. The default scope of a
// member is its own, whatever names exist. Without prompt_token_ids no
// block is cached, and the scope has no effect.
struct CacheScope {
  // The scope of the request's blocks (after `shared_prefix_tokens`, if
  // any). Empty (the default): its member's own scope, private to
  // RequestSpec::user. A name: a scope shared on purpose by every request
  // that names it, of any member (vLLM's cache_salt), e.g. a document the
  // household reads together. At most kMaxCacheScopeBytes of valid UTF-8
  // without NUL bytes.
  std::string name;
  // The prompt's first `shared_prefix_tokens` tokens are in the scope named
  // `shared_prefix_scope`: every full block within them is shared with the
  // requests of any member that start with the same tokens in that scope
  // (the chat template's fixed beginning, the household's system prompt),
  // and the block that extends past them, and every block after, is in the
  // request's own scope (`name`, or the member's). Put only tokens every
  // member may see there. 0 (the default): none; else in [1,
  // prompt_tokens], with `shared_prefix_scope` a name as for `name`, which
  // must be empty when this is 0.
  int32_t shared_prefix_tokens = 0;
  std::string shared_prefix_scope;
  // True: the request neither reuses cached blocks nor leaves any: every
  // position is computed and its blocks stay private. Then `name`,
  // `shared_prefix_tokens` and `shared_prefix_scope` must be unset.
  bool opt_out = false;
};

// What a request asks of the model (RequestSpec::kind).
enum class RequestKind : uint8_t {
  // Prefill the prompt, then sample up to max_new_tokens tokens.
  kGenerate,
  // An embedding (a pooling request): prefill the prompt and return one
  // vector pooled over it (RequestSpec::pooling); nothing is sampled and
  // max_new_tokens is 0. Charged to its member's fairness account and
  // budgeted like any prefill; the request finishes (FinishReason::kPooled)
  // with the step that computes its last prompt position, and its full
  // blocks stay cached as a generation's do.
  kEmbed,
};
std::string_view RequestKindName(RequestKind kind);

// The most samples one request may ask for (RequestSpec::num_samples).
inline constexpr int32_t kMaxSamples = 64;

// How an embedding's vector is pooled from the prompt's final hidden states
// (RequestSpec::pooling), which decides what the scheduler may skip.
enum class Pooling : uint8_t {
  // The last prompt position's (a causal model's usual embedding). Only that
  // position must be computed, so cached prefix blocks are reused as for
  // generation, and a preemption may swap.
  kLast,
  // The mean over every prompt position. The engine sums each position's
  // state as it computes it, so every position must be computed within one
  // stay on the device: the request reuses no cached block (it still leaves
  // its own, in its scope) and a preemption always recomputes it from
  // position 0, never swaps (the engine drops its sum with its state).
  kMean,
};
std::string_view PoolingName(Pooling pooling);

// The most encoder spans one prompt may carry (RequestSpec::encoder_spans).
inline constexpr size_t kMaxEncoderSpans = 64;

// Part of a prompt that an encoder computes rather than a token embedding:
// an image's (or an audio clip's) embedding tokens, which the engine's
// encoder produces from the host's bytes (found by RequestSpec::handle and
// the span's index) and the model reads at those positions instead of
// token embeddings. The scheduler plans the encoder's work
// (StepPlan::encoder_inputs) under SchedulerOptions::
// max_encoder_tokens_per_step, keeps encoder outputs in an encoder cache it
// manages (SchedulerOptions::encoder_cache_tokens), and never ends a prefill
// chunk inside a span, so each span's positions are computed in the step
// that reads its encoder output.
struct EncoderSpan {
  // First prompt position of the span, in [0, prompt_tokens).
  int32_t position = 0;
  // Positions it covers, >= 1, ending within the prompt, at most the
  // encoder's budget per step and the encoder cache.
  int32_t length = 0;
  // The content's hash (e.g. of the image's bytes), any value: the same
  // content in the same cache scope reuses cached encoder output and
  // prompt blocks, and it enters the prefix-hash chain of every block the
  // span overlaps, so two different images behind the same placeholder ids
  // never share a block.
  uint64_t content_hash = 0;
};

struct RequestSpec {
  // Who asked. Must name a user configured in SchedulerOptions::users.
  UserId user = UserId(0);
  // What kind of work this is. Must name a class in
  // SchedulerOptions::work_classes.
  WorkClassId work_class = WorkClassId(0);
  // Which model serves it. Must name a model in SchedulerOptions::models;
  // naming an adapter (ModelConfig::base_model) runs it on that adapter
  // over its base model.
  ModelId model = ModelId(0);

  // Number of prompt tokens. Must be > 0 and, with `max_new_tokens`, fit the
  // model's context length.
  int32_t prompt_tokens = 0;
  // Optional prompt token ids. Either empty, or exactly `prompt_tokens` ids,
  // each in [0, vocab_size) of the model when the model declares a vocabulary.
  // When present, full prompt blocks take part in prefix caching and executors
  // that compute real tokens can read them through the step plan.
  std::vector<TokenId> prompt_token_ids;
  // Multimodal prompts: spans computed by the engine's encoder
  // (EncoderSpan), sorted by position, not overlapping, at most
  // kMaxEncoderSpans. The prompt's token ids (if given) at a span's
  // positions are the engine's placeholders; what distinguishes one image
  // from another is the span's content_hash.
  std::vector<EncoderSpan> encoder_spans;
  // Upper bound on generated tokens. Must be > 0 for kGenerate and 0 for
  // kEmbed.
  int32_t max_new_tokens = 0;
  // Generation (the default) or an embedding (RequestKind). An embedding
  // has no TPOT (tpot_slo must be unset or infinite) and no
  // predicted_output; its TTFT is the time to its vector.
  RequestKind kind = RequestKind::kGenerate;
  // kEmbed only (kLast, the default, otherwise): how its vector is pooled.
  Pooling pooling = Pooling::kLast;
  // Parallel sampling: n > 1 generates n answers to one prompt, as a group
  // of n requests with consecutive ids (Submit returns sample 0's), each
  // with its own results (RequestResult::group, sample_index) and plan
  // entries, sample k carrying `handle` + k. Sample 0 computes the prompt;
  // the others wait (RequestPhase::kHeld) until its first token, then reuse
  // its cached prompt blocks by reference (prefix caching on and token ids
  // given: otherwise each computes the prompt itself) and compute only the
  // last prompt position, where each samples its own first token (the
  // engine's sampler, seeded per sample, makes the answers differ). Cancel
  // of any sample cancels the group; each sample is preempted alone, as
  // vLLM's child requests are (preempting the group would throw away the
  // siblings' progress to free memory one of them holds). Counted and
  // charged as n requests (pending limits, quotas). In [1, kMaxSamples];
  // generations only.
  int32_t num_samples = 1;
  // Optional predicted output length; Submit returns InvalidArgument for
  // one outside the ranges OutputLengthPrediction states.
  OutputLengthPrediction predicted_output;

  // Higher runs earlier under priority-aware policies. Any int32 value; FIFO
  // ignores it.
  int32_t priority = 0;
  // Absolute time after which the request ends as timed out, wherever it is.
  // InfiniteFuture() means no deadline.
  absl::Time deadline = absl::InfiniteFuture();
  // For agent workflows: the request whose answer triggered this one (an id
  // this scheduler returned from Submit, of the same user). The call joins
  // its parent's workflow (RequestView::workflow): it is charged to the same
  // user's fairness account like every request of that user, and policies
  // with arrival-ordered leaves rank it up to a head start before its arrival
  // (never before the workflow's), so the next call of a running workflow is
  // not queued behind unrelated work that arrived while its parent ran
  // (PolicyTreeConfig::workflow_head_start). The parent may still be live or may
  // have ended up to SchedulerOptions::workflow_retention ago; a call whose
  // parent ended longer ago starts a new workflow. Submit returns
  // InvalidArgument for an id it never issued and for a live parent of
  // another user; a call whose ended parent belonged to another user ends
  // as kRejected with that reason.
  RequestId parent;
  // When the request reached the host, for queue-wait accounting and arrival
  // order. The default (InfinitePast) means "now": the `now` of the Plan()
  // that takes the request in. Hosts that timestamp arrivals themselves (and
  // the simulator) set it. A stamp after that Plan's `now` is clamped to it,
  // or, more than SchedulerOptions::max_arrival_lead after, ends the request
  // as kRejected; InfiniteFuture is InvalidArgument at Submit. Token quotas
  // never look at it (UserConfig::quota_window).
  absl::Time arrival_time = absl::InfinitePast();
  // This request's own SLO targets, overriding its work class's
  // (WorkClassConfig::ttft_slo / tpot_slo). Unset: the class's target.
  // InfiniteDuration: no target for this request, whatever its class says.
  // Otherwise must be positive and at most kMaxSloTarget (Submit returns
  // InvalidArgument naming the field). The scheduler resolves the effective
  // targets once at Submit; RequestView and metrics events carry them.
  // TTFT counts from arrival_time to the first token; TPOT is the mean gap
  // between the request's tokens after the first.
  std::optional<absl::Duration> ttft_slo;
  std::optional<absl::Duration> tpot_slo;
  // The host's own handle for this request (a slot index, a pointer, a key
  // in its own table): opaque, never interpreted, any value. Echoed in every
  // plan entry naming the request (StepPlan::sequences, preempted, released)
  // and in its RequestResult, so the engine thread can find the host's data
  // without the RequestId. That matters because Submit returns the id only
  // after the request is queued: the engine thread may plan it before the
  // submitting thread has stored anything under the id, but the host can
  // store its data under the handle before calling Submit.
  uint64_t handle = 0;
  // Free-form label carried into metrics and terminal results (e.g. a trace
  // row). Not interpreted. At most SchedulerOptions::max_label_bytes long; it
  // counts against max_pending_bytes while the request is unfinished.
  std::string label;
  // Whose cached KV the request may reuse (CacheScope): by default only its
  // member's own. Submit returns InvalidArgument naming the field for a
  // scope outside CacheScope's rules. Its names count against
  // max_pending_bytes while the request is unfinished.
  CacheScope cache_scope;
  // True: the request enters held (RequestPhase::kHeld), not ready to run,
  // e.g. while its grammar compiles or its KV loads from elsewhere, until
  // Scheduler::Release. A held request takes no running slot, no KV and no
  // budget, and the policy does not see it; its deadline and its class's
  // queue timeout run from arrival as for any request, and Cancel,
  // SetPriority and SetWorkClass work on it.
  bool hold = false;
};

}  // namespace hearth

#endif  // HEARTH_REQUEST_REQUEST_SPEC_H_

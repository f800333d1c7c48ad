// File: hearth/scheduler/step_plan.h
//
// `StepPlan` is what the scheduler decides for one engine iteration: "tokens
// per request". One shape covers a whole prefill, a chunk of it, and a decode:
// each scheduled sequence runs positions [start_position, start_position +
// num_tokens) and, when `sample` is set, samples one token after the last.
//
// Before running the forward pass the engine applies, in this order (the
// same text as in README.md and hearth/c/hearth.h):
//   1. `released` and `preempted`: drop engine-side state of those requests
//      (a swap preemption's blocks are still read by 2),
//   2. `swap_out` copies (device -> host),
//   3. `swap_in` copies (host -> device),
//   4. `copy_on_write` copies (device -> device),
//   5. `model_commands`, in list order (an unload frees the memory of the
//      loads after it); no sequence of this plan runs on a model it loads or
//      unloads,
//   6. `encoder_frees`, then the `encoder_inputs` with `encode` set (the
//      encoder writes entries the frees may just have given back),
// then runs `sequences`. A device block freed by a release or a preemption in
// this step may already be the target of a swap-in, a copy-on-write or a new
// sequence's writes in the same step, and an unload may free the memory the
// step's blocks need, so that order matters. An empty plan (empty()) is
// completed like any other. With overlapped planning, `voided` is read last,
// just before Complete().
//
// Host handles: every entry that names a request (sequences, preempted,
// released, voided) carries its RequestSpec::handle beside its id, so an engine can
// key its own state by handle and never needs the id Submit returned.
//
// Ownership: the plan and every span in it are owned by the Scheduler and stay
// valid until the matching Complete() (or the scheduler's destruction). Copy
// what must outlive that. With overlapped planning two plans may be
// outstanding; each stays valid until its own Complete(), and only their
// `voided` lists change meanwhile (the next Plan() and the previous step's
// Complete() append to them, on the engine thread: read them there).

#ifndef HEARTH_SCHEDULER_STEP_PLAN_H_
#define HEARTH_SCHEDULER_STEP_PLAN_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hearth/common/ids.h"

namespace hearth {

// The most draft tokens one decode may carry (SchedulerOptions::
// max_draft_tokens, ScheduledSequence::draft_tokens).
inline constexpr int32_t kMaxDraftTokens = 8;

struct ScheduledSequence {
  RequestId id;
  // RequestSpec::handle of the request.
  uint64_t handle = 0;
  ModelId model;
  // First position to compute (equals the number of tokens already cached).
  int32_t start_position = 0;
  // Positions to compute this step, >= 1.
  int32_t num_tokens = 0;
  // Whether the engine samples a token after the last position. True exactly
  // when the step reaches the end of the sequence known so far.
  bool sample = false;
  // The sequence is in its decode phase: this step feeds the last sampled
  // token and samples the next (num_tokens == 1, sample). False for every
  // prefill or recompute chunk, including a one-token last prompt chunk.
  bool decode = false;
  // True the first time a sequence appears, and again after a preemption, a
  // swap-in, or a speculative decode whose rejected drafts gave blocks
  // back: `block_table` must then replace any engine-side table. Otherwise
  // the engine appends `new_blocks` to the table it already holds.
  // (This flag, input_pending and the embedding flags below are one-bit
  // fields sharing a byte, so that a plan entry stays at 80 bytes.)
  bool full_block_table : 1 = false;
  // Overlapped planning (SchedulerOptions::overlap_planning), decodes only:
  // the input token (at start_position) is the one the previous step
  // samples for this request, not yet known when this plan was made;
  // `token_ids` is empty and the engine feeds the token from its own output
  // of that step (and drafts after it, when draft_tokens allows).
  bool input_pending : 1 = false;
  // An embedding (RequestKind::kEmbed), on each of its chunks: nothing is
  // ever sampled for it; the engine keeps what its pooling needs from the
  // final hidden states of the positions it computes. With `mean_pool` that
  // is their running sum (every position is computed within one stay on the
  // device, in order: an entry starting at position 0 starts a new sum);
  // otherwise only the last prompt position's state.
  bool embed : 1 = false;
  bool mean_pool : 1 = false;
  // The step reaches the end of an embedding's prompt: the engine pools its
  // vector after the last position (`sample` is false) and hands it to the
  // host itself; the request finishes with this step's Complete
  // (FinishReason::kPooled) unless its outcome reports an error or out of KV.
  bool pool : 1 = false;
  // Speculative decoding (SchedulerOptions::max_draft_tokens), decodes
  // only: the engine may feed up to this many tokens of its own drafter
  // after the last sampled one, at positions start_position + 1 onward
  // (the block table covers them, and the step's token budget counted
  // them), verify them in the same forward pass and report how many it
  // accepted (SequenceOutcome::accepted_drafts). An engine without a
  // drafter ignores it and decodes one token as usual. 0 otherwise.
  // (int8_t: it fits the padding after the flags, keeping a plan entry at
  // 80 bytes; at most kMaxDraftTokens.)
  int8_t draft_tokens = 0;
  // The request's whole device block table after this step's allocations.
  absl::Span<const BlockId> block_table;
  // Blocks appended since the engine last saw this sequence (all of
  // `block_table` when `full_block_table`).
  absl::Span<const BlockId> new_blocks;
  // Token ids for positions [start_position, start_position + num_tokens),
  // when the request was submitted with token ids (and the engine reported
  // sampled ids); empty otherwise.
  absl::Span<const TokenId> token_ids;
};

static_assert(sizeof(ScheduledSequence) <= 80,
              "a plan entry is read and written per sequence per step; keep it small");

enum class PreemptionMode : uint8_t {
  // Blocks freed; the request recomputes its prefix (prompt and the tokens
  // generated so far) when readmitted.
  kRecompute,
  // Blocks copied to the host tier (see StepPlan::swap_out); progress kept.
  kSwap,
};

// Why a request left the running set without ending.
enum class PreemptionCause : uint8_t {
  // The scheduler needed its memory or its place (decode growth, a class
  // limit, a reclaim, an admission the policy ranks higher).
  kScheduler,
  // The engine reported it out of KV (SequenceOutcome::out_of_kv) in the
  // previous step.
  kEngineOutOfKv,
  // The engine failed it in the previous step (SequenceOutcome::error) and it
  // is retried from scratch (WorkClassConfig::max_retries). Counted in
  // SchedulerStats::retries and RequestResult::retries, not as a preemption.
  kRetry,
};
std::string_view PreemptionCauseName(PreemptionCause cause);

// A request whose engine-side state the engine must drop; it stays live, and
// a later plan lists it again with a full block table.
struct Preemption {
  RequestId id;
  // RequestSpec::handle of the request.
  uint64_t handle = 0;
  PreemptionMode mode = PreemptionMode::kRecompute;
  PreemptionCause cause = PreemptionCause::kScheduler;
};

// A request that ended (any terminal phase) after having appeared in a plan.
struct ReleasedSequence {
  RequestId id;
  // RequestSpec::handle of the request.
  uint64_t handle = 0;
};

// A plan entry voided while its plan was outstanding (StepPlan::voided).
struct VoidedSequence {
  RequestId id;
  // RequestSpec::handle of the request.
  uint64_t handle = 0;
};

// One block copy. For swap_out, `source` is a device block and `target` a host
// block; for swap_in the reverse; for copy_on_write both are device blocks.
struct BlockCopy {
  RequestId id;
  BlockId source;
  BlockId target;
};

// An encoder span (RequestSpec::encoder_spans) whose positions a sequence of
// this step computes: the model reads the output held in encoder cache entry
// `entry` at positions [position, position + length) instead of token
// embeddings. With `encode`, the engine first runs its encoder on the
// span's content (the host's, by handle and span_index) and stores the
// output in `entry`; without, `entry` holds it from an earlier step (this
// request's or another's with the same content in the same cache scope).
// An engine that holds no output in an entry a sequence reads (its encoder
// failed, or it never stored one) fails that sequence
// (SequenceOutcome::error); the scheduler then stops trusting the entries
// that step encoded or read for it. Encode every listed input, voided
// entries' too (another request may read the output): a host keeps a
// request's content until the plans listing it are completed.
struct EncoderInput {
  RequestId id;
  // RequestSpec::handle of the request (handle + k for parallel sample k).
  uint64_t handle = 0;
  // Index in the request's RequestSpec::encoder_spans, and that span's
  // position and length.
  int32_t span_index = 0;
  int32_t position = 0;
  int32_t length = 0;
  // Encoder cache entry: a small integer, reused after a free.
  int32_t entry = 0;
  bool encode = false;
};

enum class ModelCommandKind : uint8_t { kLoad, kUnload };

// Residency commands for engines that host several models.
struct ModelCommand {
  ModelCommandKind kind = ModelCommandKind::kLoad;
  ModelId model;
};

struct StepPlan {
  // Monotonic step counter, starting at 1 for the first plan.
  uint64_t step = 0;
  absl::Time now = absl::InfinitePast();

  // Decodes first, then continuing prefill chunks, then admissions.
  std::vector<ScheduledSequence> sequences;
  // Recompute (kScheduler, kEngineOutOfKv, kRetry) and swap (kScheduler)
  // preemptions. Entries of cause kEngineOutOfKv or kRetry answer the
  // previous step's outcome; those requests are not scheduled in this plan.
  std::vector<Preemption> preempted;
  // Requests that ended since the last plan (finished, cancelled, timed out,
  // failed) after having appeared in a plan; the engine drops any state it
  // holds for them (slots, its own KV bookkeeping).
  std::vector<ReleasedSequence> released;
  std::vector<BlockCopy> swap_out;
  std::vector<BlockCopy> swap_in;
  std::vector<BlockCopy> copy_on_write;
  std::vector<ModelCommand> model_commands;
  // Overlapped planning only: requests whose entries in `sequences` became
  // moot while this plan was outstanding, and whose outcomes Complete()
  // ignores (an outcome must still be reported for each entry, with its id
  // and an accepted_drafts within its draft_tokens, whose ids stay in
  // StepOutcome::draft_ids; its other fields are not read). An entry is
  // voided when its request ended or left the device after this plan was
  // made: by the next Plan() (a cancel, a deadline, a preemption, a class
  // change that preempts: the request is then in that plan's `released` or
  // `preempted`), or by the previous step's Complete() (a finish, a
  // failure, out of KV). Both come before this plan's own Complete(), so the list is
  // final then: read it just before calling Complete() and drop those
  // entries' tokens. Always empty without overlap.
  std::vector<VoidedSequence> voided;
  // Multimodal prompts: the spans this step's sequences read, each sequence's
  // in its plan order (a span of an entry voided or dropped from the plan
  // may stay listed; encoding it is harmless), and the encoder cache
  // entries the engine drops before this step's encodes. An entry lives
  // from the plan that encodes it to the plan that frees it; together they
  // hold at most SchedulerOptions::encoder_cache_tokens positions.
  std::vector<EncoderInput> encoder_inputs;
  std::vector<int32_t> encoder_frees;

  // Sum of num_tokens + draft_tokens over `sequences` (the positions the
  // step may compute, drafts included); never above max_batched_tokens.
  int32_t num_batched_tokens = 0;
  // Sequences with `decode` set.
  int32_t num_decodes = 0;
  // Sum of `length` over the encoder_inputs with `encode` set; never above
  // SchedulerOptions::max_encoder_tokens_per_step.
  int32_t num_encoder_tokens = 0;

  bool empty() const {
    return sequences.empty() && preempted.empty() && released.empty() &&
           swap_out.empty() && swap_in.empty() && copy_on_write.empty() &&
           model_commands.empty() && encoder_frees.empty();
  }
};

// Whether `plan` lists `id` in `voided` (a linear scan: the list is short).
inline bool IsVoided(const StepPlan& plan, RequestId id) {
  for (const VoidedSequence& v : plan.voided) {
    if (v.id == id) return true;
  }
  return false;
}

}  // namespace hearth

#endif  // HEARTH_SCHEDULER_STEP_PLAN_H_

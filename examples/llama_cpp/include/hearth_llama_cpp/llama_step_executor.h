// File: hearth_llama_cpp/llama_step_executor.h
//
// `LlamaStepExecutor` runs Hearth's StepPlans on a llama.cpp context: each
// plan becomes one llama_batch and one llama_decode().
//
// The mapping:
//   - every running request gets a llama sequence id from a slot map the
//     first time it appears (ids 0 .. n_seq_max-1, reused once released);
//   - a scheduled sequence contributes positions [start_position,
//     start_position + num_tokens) with the plan's token ids; a sequence's
//     positions must continue at its last position + 1, which is checked;
//   - logits are requested only for the last position of sequences whose
//     `sample` is set; the token is the greedy arg max, or drawn by the
//     request's SamplingParams (LlamaExecutorOptions::sampling), and an
//     end-of-generation token ends the request (kStopToken);
//   - `preempted` and `released` requests lose their llama memory
//     (llama_memory_seq_rm) and their slot. Without prefix caching Hearth's
//     block tables are not read: llama.cpp places KV cells itself, and
//     Hearth's allocator, sized to the same cells (SizeSchedulerForContext),
//     only keeps the total within them;
//   - on per-sequence streams (KvLayout::kPerSequence) the batch lists
//     sequences by ascending id and new sequences take the lowest free id:
//     llama.cpp runs sequences of consecutive ids in one forward pass, and
//     splits a batch at every gap.
//
// Prefix caching (LlamaExecutorOptions::block_size > 0, with Hearth's
// kv.enable_prefix_caching): llama.cpp's cells belong to sequences, not to
// blocks, so the executor maps Hearth's block ids to the sequence holding
// their cells (kv_cell_map.h). A sequence whose first entry starts past 0
// shares its cached positions from their holders (llama_memory_seq_cp, no
// copy in the unified cache); released and preempted sequences keep their
// cells on spare sequence ids (the context's n_seq_max above Hearth's
// max_running) while they hold blocks Hearth may hit; a block handed out
// again drops its old cells first. When no id is spare the oldest retained
// sequence is evicted, and a later hit on its blocks is recomputed from the
// tokens the executor recorded for them, before the step (stats count it).
// Hearth's copy-on-write of a fully cached prompt's last block needs no
// copy: only the positions before the entry's start are shared. On
// per-sequence streams nothing is shared: a hit takes over the stream of
// the retained sequence holding the longest common prefix, or copies the
// whole stream of a live one, and recomputes the rest (kv_cell_map.h).
//
// Out of KV: llama_decode() returning 1 means no KV slot was found and the
// memory was rolled back. That happens only when Hearth was told the pool is
// larger than it is. The executor then evicts the last sequence of the batch
// (plan order puts admissions last), drops its memory and retries with the
// rest; the evicted sequence is reported with SequenceOutcome::out_of_kv, and
// Hearth preempts it by recompute (same request id, no failure recorded).
//
// Swap (Hearth's kv.num_host_blocks > 0, PreemptionMode::kSwap): llama.cpp
// owns its cells and saves a sequence whole, and Hearth swaps a request out
// and in whole, so a request's swap_out copies become one
// llama_state_seq_get_data() into host memory, kept under the host blocks
// Hearth named, and its swap_in copies one llama_state_seq_set_data() into
// a new sequence id (swap_store.h). A swap-in that names other host blocks
// than one swap-out did, or that llama.cpp finds no room for, fails that
// sequence (with the reason), which Hearth then retries or fails.
//
// Embeddings (ScheduledSequence::embed): a step's embedding chunks run in a
// llama_decode() of their own with llama_set_embeddings on (a second forward
// pass in a step that also generates), their outputs being the final-normed
// hidden states (llama_get_embeddings_ith, the context's pooling NONE):
// every position of a mean-pooled chunk, summed per request in position
// order, and the last position of a last-pooled one at its pooling step.
// The pooling step's vector, scaled to unit length (n_embd floats), goes in
// StepOutcome::embeddings. A mean-pooled chunk that does not continue its
// sum fails alone.
//
// A batch with more tokens than the context's n_batch would abort the
// process inside llama.cpp, so Execute refuses such a plan with an error.
// Copy-on-write copies only with prefix caching.
//
// Thread-safety: one thread at a time (the engine thread).
//
// Example:
//   auto executor = hearth::llama_cpp::LlamaStepExecutor::Create(ctx, {.block_size = 16});
//   hearth::EngineLoop loop(*scheduler, **executor);
//   if (absl::Status s = loop.Step(clock.Now()); !s.ok()) return s;

#ifndef HEARTH_LLAMA_CPP_LLAMA_STEP_EXECUTOR_H_
#define HEARTH_LLAMA_CPP_LLAMA_STEP_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "hearth/exec/sampling.h"
#include "hearth/exec/step_executor.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"
#include "llama.h"

namespace hearth::llama_cpp {

struct LlamaExecutorStats {
  uint64_t steps = 0;
  uint64_t decode_calls = 0;
  // llama_decode() returns of 1 (no KV slot), and sequences evicted for them.
  uint64_t out_of_kv_returns = 0;
  uint64_t evictions = 0;
  // Largest batch handed to llama_decode(), in tokens.
  int32_t max_batch_tokens = 0;
  // Prefix caching: positions a hit shared from another sequence's cells,
  // positions recomputed because their cells had been evicted, and
  // retained sequences evicted for an id.
  uint64_t prefix_shared_positions = 0;
  uint64_t prefix_repaired_positions = 0;
  uint64_t retained_evictions = 0;
  // Per-sequence streams: hits served by taking over a retained sequence's
  // stream, and by copying a live sequence's whole stream (the rest of such
  // a hit, and hits nobody shares, are repaired).
  uint64_t prefix_stream_reuses = 0;
  uint64_t prefix_stream_copies = 0;
  // Swap: sequences saved to and restored from host memory, the bytes held
  // there now, and time spent saving and restoring.
  uint64_t swapped_out = 0;
  uint64_t swapped_in = 0;
  int64_t swap_bytes = 0;
  absl::Duration swap_time;
  // Time inside llama_decode() and time spent mapping plans (everything in
  // Execute except llama_decode).
  absl::Duration decode_time;
  absl::Duration mapping_time;
};

struct LlamaExecutorOptions {
  // Hearth's kv.block_size when Hearth caches prefixes (then hits start
  // sequences past position 0); 0: no prefix caching (a plan entry that
  // starts past 0 for a sequence llama.cpp holds nothing of is an error).
  int32_t block_size = 0;
  // Each request's sampling (hearth/exec/sampling.h), by its
  // RequestSpec::handle, so that parallel samples (handles handle + k)
  // differ and each equals its seed's run alone. Empty: greedy for all.
  std::function<SamplingParams(uint64_t handle)> sampling;
};

class KvCellMap;
class SwapStore;

class LlamaStepExecutor : public StepExecutor {
 public:
  // Called for every sampled sequence with its request and the logits row
  // the token was picked from. Valid only during the call.
  using LogitsObserver = std::function<void(RequestId, absl::Span<const float>)>;

  // Clears the context's memory. `ctx` is not owned and must outlive the
  // executor. InvalidArgument when null or for a negative block size.
  static absl::StatusOr<std::unique_ptr<LlamaStepExecutor>> Create(
      llama_context* ctx, LlamaExecutorOptions options = {});
  ~LlamaStepExecutor() override;

  // LlamaStepExecutor::Execute()
  //
  // Runs `plan` as one llama_decode(). Per-sequence problems (positions that
  // do not continue, missing token ids, no free sequence id) fail that
  // sequence only; one llama.cpp has no KV for is reported out_of_kv.
  // Whole-step errors: InvalidArgument for a plan over n_batch tokens,
  // FailedPrecondition for copy-on-write without prefix caching, Internal when
  // llama_decode() fails otherwise (the plan's sequences should then be
  // failed by the caller, as ExecuteStep() and EngineLoop do).
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override;

  void set_logits_observer(LogitsObserver observer) { observer_ = std::move(observer); }
  // Replaces LlamaExecutorOptions::sampling (engine thread, between steps).
  void set_sampling(std::function<SamplingParams(uint64_t handle)> sampling) {
    sampling_ = std::move(sampling);
  }
  const LlamaExecutorStats& stats() const { return stats_; }
  // Sequences holding a llama sequence id now.
  int32_t live_sequences() const { return static_cast<int32_t>(slots_.size()); }
  int32_t n_batch() const { return n_batch_; }

 private:
  struct Slot {
    llama_seq_id seq = 0;
    // The next position llama.cpp expects for this sequence.
    int32_t next_pos = 0;
    // The token sampled for it by the last step that ran it, or -1: the
    // input of a decode planned ahead (ScheduledSequence::input_pending).
    TokenId sampled = -1;
    // A mean-pooled embedding's running sum of its positions [0, next_pos).
    std::vector<float> pool_sum;
  };
  // Per planned sequence, for one Execute.
  struct Entry {
    bool active = false;
    int32_t batch_begin = 0;
  };

  LlamaStepExecutor(llama_context* ctx, LlamaExecutorOptions options);
  // The request's slot ends: `keep` when it was released or preempted (its
  // cells may hold cached blocks), not when its state is untrusted.
  void Drop(RequestId id, bool keep = false);
  std::optional<llama_seq_id> TakeSeqId();
  // A plan entry's token ids: one per position, inside the vocabulary.
  absl::Status CheckTokens(const ScheduledSequence& s) const;
  absl::Status Admit(const StepPlan& plan, const ScheduledSequence& s);
  // Swap: saves the cells of every request in plan.swap_out (before its
  // preemption drops them), and restores every request in plan.swap_in
  // into a new slot; failures are kept for Admit to report.
  void SwapOut(const StepPlan& plan);
  void SwapIn(const StepPlan& plan);
  void SwapInOne(const StepPlan& plan, RequestId id, absl::Span<const BlockCopy> copies);
  // Prefix caching: recomputes the positions whose cells were evicted, before
  // the step; a sequence it finds no KV for is reported out of KV.
  absl::Status RunRepairs(const StepPlan& plan, StepOutcome* outcome);
  // The active entries in batch order (order_).
  void OrderBatch(const StepPlan& plan);
  // The active entries of one pass: embeddings (`embed`) or generations.
  void BuildBatch(const StepPlan& plan, bool embed);
  absl::Status DecodeWithEvictions(const StepPlan& plan, StepOutcome* outcome, bool embed);
  // After the embedding pass: each chunk's hidden states join its sum, and
  // each pooling step's vector goes in the outcome.
  void PoolEmbeddings(const StepPlan& plan, StepOutcome* outcome);
  void Finish(const StepPlan& plan, StepOutcome* outcome);

  llama_context* ctx_;
  const llama_vocab* vocab_;
  int32_t n_batch_;
  int32_t n_vocab_;
  llama_batch batch_;
  absl::flat_hash_map<RequestId, Slot> slots_;
  std::vector<llama_seq_id> free_seq_ids_;
  std::vector<Entry> entries_;
  std::vector<size_t> order_;
  LogitsObserver observer_;
  LlamaExecutorStats stats_;
  // The context has per-sequence KV streams (KvLayout::kPerSequence).
  const bool streams_;
  const int32_t block_size_;
  std::function<SamplingParams(uint64_t handle)> sampling_;
  std::unique_ptr<KvCellMap> cells_;
  std::unique_ptr<SwapStore> swaps_;
  // Why a swap-in of this step failed, by request.
  absl::flat_hash_map<RequestId, std::string> swap_errors_;
  std::vector<BlockId> swap_blocks_;
};

}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_LLAMA_STEP_EXECUTOR_H_

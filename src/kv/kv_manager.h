// File: src/kv/kv_manager.h
//
// KvManager: the scheduler's one owner of KV-cache bookkeeping (the role of
// vLLM's KVCacheManager). It holds the block allocator and the prefix cache,
// and it alone changes a sequence's SequenceKv: its block table, host copies
// while swapped out, its chained block hashes and its prefill reservation.
// The planner decides *who* gets memory; this type does the bookkeeping of
// *which* blocks, so that the two cannot drift apart. Each SequenceKv lives
// inside its request's record, beside the fields a step reads with it, so
// that a step touches one place per sequence.
//
// Internal to the scheduler; engine thread only. Not movable: the prefix
// cache points at the allocator it owns.

#ifndef HEARTH_SRC_KV_KV_MANAGER_H_
#define HEARTH_SRC_KV_KV_MANAGER_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "kv/block_allocator.h"
#include "kv/prefix_cache.h"
#include "hearth/scheduler/step_plan.h"
#include "kv/chain_scope.h"

namespace hearth::internal {

// Releases a reused buffer's memory when it holds more than twice what its
// next use needs (plus some slack, so small requests never reallocate), so
// that a slot's buffers track its current request, not the largest ever.
template <typename T>
void DropOversized(std::vector<T>& v, size_t needed) {
  if (v.capacity() > 2 * needed + 256) std::vector<T>().swap(v);
}

// One sequence's KV state; change it only through KvManager. The first
// fields are the ones every step reads.
struct alignas(64) SequenceKv {
  int32_t num_blocks() const { return static_cast<int32_t>(device.size()); }

  // The block table: device blocks in position order.
  std::vector<BlockId> device;
  // Leading blocks registered in the prefix cache.
  int32_t registered = 0;
  // Leading blocks the engine has been sent.
  int32_t sent = 0;
  // While prefilling: blocks its remaining prompt will still take, held back
  // from admissions so that concurrent long prompts cannot overcommit the
  // cache and preempt each other in a loop.
  int32_t prefill_reserve = 0;
  // While running in a class with a hard KV budget: the blocks reserved for
  // its largest size (KvCacheManager, ClassBlockLedger::ReservationFor).
  int32_t class_reserve = 0;
  // The next plan entry carries the whole table: the engine holds nothing
  // for this sequence (new, or its state was dropped). False exactly when
  // the sequence appeared in a plan since its state was last dropped, so it
  // also says whether a drop must be listed for the engine.
  bool needs_full_table = true;
  // The table lost blocks the engine was sent (those of rejected draft
  // tokens) while the engine keeps its state: the next plan entry carries
  // the whole table, for the engine to replace its longer one.
  bool resend_table = false;
  // Host copies while swapped out.
  std::vector<BlockId> host;
  // Chain hashes of the full blocks whose tokens are known, in `scope`.
  std::vector<uint64_t> hashes;
  ChainScope scope;
};

class KvManager {
 public:
  KvManager(BlockAllocator allocator, int32_t block_size, bool prefix_caching);
  KvManager(const KvManager&) = delete;
  KvManager& operator=(const KvManager&) = delete;

  // --- The hash chain: one definition, used by Submit (any thread, on the
  // prompt) and by admission and registration (on generated tokens too).

  // Extends `hashes`, the chain of `scope` (which holds the model) over
  // `tokens`, to `blocks` full blocks of `block_size`. The scope enters at
  // block 0 and, after a shared prefix, at its first own block, so no hash
  // of one scope can be found by a lookup in another. Each block an encoder
  // span overlaps has the span's salt entered too (SpanSalt): from `spans`
  // when given (Submit, over the prompt's full blocks), else from the
  // scope's tail salt (the one partial prompt block a span may reach).
  static void ExtendHashChain(const ChainScope& scope, absl::Span<const TokenId> tokens,
                              int32_t block_size, size_t blocks,
                              std::vector<uint64_t>* hashes,
                              absl::Span<const EncoderSpan> spans = {});

  // Room for the chain of a sequence of up to `max_positions`, so that
  // extending it never reallocates.
  static size_t HashCapacity(int32_t max_positions, int32_t block_size) {
    return static_cast<size_t>(max_positions / block_size) + 1;
  }

  // --- Sequences.

  // Starts `seq` with no blocks, keeping its buffers' capacity, reserved for
  // `max_positions` so that spans handed out in plans stay valid; `hashes`
  // are its prompt's in `scope` (both from Submit).
  void Open(SequenceKv& seq, int32_t max_positions, bool has_token_ids,
            const ChainScope& scope, std::vector<uint64_t> hashes);
  int32_t block_size() const { return block_size_; }
  int32_t BlocksFor(int32_t positions) const {
    return (positions + block_size_ - 1) / block_size_;
  }

  // --- Allocation.

  // Device blocks an allocation may take: free or cached, and within
  // `kv_block_limit` owned blocks.
  int32_t Allocatable(int32_t kv_block_limit) const;
  // Appends `n` fresh blocks (the caller checked Allocatable).
  void Append(SequenceKv& seq, int32_t n);
  // Releases the table's tail beyond `keep` blocks, last first, so the LRU
  // evicts a sequence's end before its more shareable beginning. Returns how
  // many were released.
  int32_t ReleaseTail(SequenceKv& seq, size_t keep);
  // Forgets what the engine was sent (after ReleaseTail(seq, 0), which
  // resets `sent`): the next plan entry carries the whole table. Returns
  // whether the engine held state for the sequence.
  bool ForgetEngineState(SequenceKv& seq) {
    return !std::exchange(seq.needs_full_table, true);
  }

  // --- Prefix hits (admission of a sequence computed from position 0).

  // Leading full blocks of `tokens` found in the prefix cache, in the
  // sequence's scope (none when it opted out); the blocks are kept for
  // TakeHits.
  int32_t FindPrefixHits(SequenceKv& seq, absl::Span<const TokenId> tokens);
  // How many of the first `hits` found blocks are cached and unreferenced:
  // reusing them takes them out of the allocatable pool.
  int32_t CachedAmongHits(int32_t hits) const;
  // Appends the first `hits` found blocks to the (empty) table.
  void TakeHits(SequenceKv& seq, int32_t hits);
  // Gives the table's last block a private copy before it is written;
  // lists the copy in `copies`.
  void CopyLastOnWrite(SequenceKv& seq, RequestId id, std::vector<BlockCopy>* copies);
  // Registers the full blocks of the first `computed` positions in the
  // sequence's scope (none when it opted out).
  void RegisterFullBlocks(SequenceKv& seq, absl::Span<const TokenId> tokens, int32_t computed);

  // --- Swap.

  // Host blocks are enough for the first `valid` blocks of the table.
  bool CanSwapOut(size_t valid) const {
    return valid > 0 && static_cast<size_t>(allocator_.num_free_host()) >= valid;
  }
  // Copies the table (already cut to its valid blocks) to host blocks.
  void SwapOut(SequenceKv& seq, RequestId id, std::vector<BlockCopy>* copies);
  // Copies the host blocks back into fresh device blocks; the host blocks
  // are freed once the step's copies ran (ReleaseDeferredHost). Returns the
  // number of device blocks taken.
  int32_t SwapIn(SequenceKv& seq, RequestId id, std::vector<BlockCopy>* copies);
  // Frees the host copies now (the request ended).
  void ReleaseHost(SequenceKv& seq);
  // Frees the host copies once the outstanding step ran (the copies may be
  // in flight).
  void DeferHostRelease(SequenceKv& seq);
  // The first `count` deferred blocks (all by default): with a plan built
  // ahead, those of the older step, whose copies have run.
  void ReleaseDeferredHost(size_t count = SIZE_MAX);

  // --- Prefill reservation.
  void ReservePrefill(SequenceKv& seq, int32_t blocks);
  void DropPrefillReserve(SequenceKv& seq);
  int32_t prefill_reserved() const { return prefill_reserved_; }

  // --- Plans.

  // Points `s` at the table: in full when the engine holds nothing, else
  // the blocks appended since it was last sent. The spans stay valid until
  // the table changes (never before Complete).
  void FillTables(SequenceKv& seq, ScheduledSequence& s);
  // `s`, already filled this step, after blocks were appended to `seq`:
  // its spans cover them too.
  void ExtendTables(SequenceKv& seq, ScheduledSequence& s);

  const BlockAllocator& allocator() const { return allocator_; }
  const PrefixCache* prefix_cache() const {
    return prefix_cache_.has_value() ? &*prefix_cache_ : nullptr;
  }
  const std::vector<BlockId>& deferred_host_releases() const {
    return host_release_after_step_;
  }

 private:
  void AddBlock(SequenceKv& seq, BlockId block);

  const int32_t block_size_;
  BlockAllocator allocator_;
  std::optional<PrefixCache> prefix_cache_;
  int32_t prefill_reserved_ = 0;
  // Prefix-cache blocks found by the last FindPrefixHits.
  std::vector<BlockId> hit_blocks_;
  std::vector<BlockId> host_release_after_step_;
};

// Inline: it runs once per scheduled sequence in every step.
inline void KvManager::FillTables(SequenceKv& seq, ScheduledSequence& s) {
  const absl::Span<const BlockId> table(seq.device);
  s.block_table = table;
  const bool full = seq.needs_full_table || seq.resend_table;
  s.full_block_table = full;
  // Built from pointers: sent <= the table's size by construction, so
  // subspan's bounds checks are skipped.
  s.new_blocks = full ? table
                      : absl::Span<const BlockId>(table.data() + seq.sent,
                                                  table.size() - static_cast<size_t>(seq.sent));
  seq.sent = static_cast<int32_t>(table.size());
  seq.needs_full_table = false;
  seq.resend_table = false;
}

inline void KvManager::ExtendTables(SequenceKv& seq, ScheduledSequence& s) {
  const absl::Span<const BlockId> table(seq.device);
  // The new blocks began where the engine's table ended before this step.
  const size_t first_new = s.block_table.size() - s.new_blocks.size();
  s.block_table = table;
  s.new_blocks = table.subspan(first_new);
  seq.sent = static_cast<int32_t>(table.size());
}

}  // namespace hearth::internal

#endif  // HEARTH_SRC_KV_KV_MANAGER_H_

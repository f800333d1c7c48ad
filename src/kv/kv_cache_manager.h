// File: src/kv/kv_cache_manager.h
//
// KvCacheManager: the KV room's answer to "how many blocks, and which"
// (the role of vLLM's KVCacheManager). The planner decides *who* runs; it
// asks this type what admitting or growing a sequence takes and whether
// that fits, and this type takes the blocks: prefix hits and the last
// hit's copy-on-write, swap-ins, fresh blocks, the reservation for the
// rest of a prompt, the admission watermark, and each work class's blocks
// and hard-budget reservations (ClassBlockLedger), so that the block tables
// and the class counts change in one place and cannot drift apart.
//
// It is built on KvManager's bookkeeping, whose raw operations (appending
// or releasing blocks without a class) it hides; the rest of KvManager's
// interface is exposed unchanged below.
//
// Internal to the scheduler; engine thread only. Not movable.

#ifndef HEARTH_SRC_KV_KV_CACHE_MANAGER_H_
#define HEARTH_SRC_KV_KV_CACHE_MANAGER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "kv/block_allocator.h"
#include "hearth/scheduler/scheduler_options.h"
#include "hearth/scheduler/step_plan.h"
#include "kv/class_block_ledger.h"
#include "kv/kv_manager.h"

namespace hearth::internal {

// A sequence offered for admission, as the KV room needs to see it.
struct AdmissionQuery {
  uint32_t work_class = 0;
  // Positions it has (prompt and generated) and positions with KV: its
  // host copies' extent when swapped out, else 0 or what a recompute
  // threw away (it starts again from its prefix hits).
  int32_t length = 0;
  int32_t computed = 0;
  // Its largest size: prompt plus max_new_tokens.
  int32_t max_positions = 0;
  bool swapped = false;
  // It has generated tokens: once its KV reaches its last position, its
  // next step is a decode and no prefill remains.
  bool has_output = false;
  // Its tokens when the host gave ids (prefix hits need them), else empty.
  absl::Span<const TokenId> tokens;
  // The most positions this step may compute for it.
  int32_t max_chunk = 0;
};

// What admitting a sequence takes (KvCacheManager::MeasureAdmission).
struct KvAdmission {
  bool swapped = false;
  // Leading blocks found in the prefix cache, and where computing starts.
  int32_t hits = 0;
  int32_t start = 0;
  // The whole sequence is cached, but its last position must run to
  // produce logits: it is rewritten in a private copy of the last block.
  bool copy_last_hit = false;
  // Positions computed this step.
  int32_t chunk = 0;
  // The table's size after this step, and the blocks that leaves the
  // allocatable pool (fresh, copied, or cached hits taken out of the LRU).
  int32_t total_blocks = 0;
  int32_t new_blocks = 0;
  // Blocks the rest of its prompt will take in later steps.
  int32_t rest_of_prefill = 0;
  // Its class's hard-budget reservation (0: none), -1 when it does not fit.
  int32_t class_reservation = 0;

  // Blocks the admission claims: now, and held back for its prefill.
  int32_t blocks_claimed() const { return new_blocks + rest_of_prefill; }
};

class KvCacheManager : private KvManager {
 public:
  // Reads `options`' kv, work_classes, preemption_mode and
  // swap_block_cost_tokens (validated).
  KvCacheManager(BlockAllocator allocator, const SchedulerOptions& options);

  using KvManager::Allocatable;
  using KvManager::BlocksFor;
  using KvManager::CanSwapOut;
  using KvManager::DeferHostRelease;
  using KvManager::ExtendTables;
  using KvManager::FillTables;
  using KvManager::ForgetEngineState;
  using KvManager::Open;
  using KvManager::RegisterFullBlocks;
  using KvManager::ReleaseDeferredHost;
  using KvManager::ReleaseHost;
  using KvManager::allocator;
  using KvManager::block_size;
  using KvManager::deferred_host_releases;
  using KvManager::prefill_reserved;
  using KvManager::prefix_cache;

  const ClassBlockLedger& classes() const { return classes_; }

  // --- Admission.

  // What admitting `q` takes; looks its prompt up in the prefix cache
  // (kept for Admit). Takes nothing.
  KvAdmission MeasureAdmission(SequenceKv& seq, const AdmissionQuery& q);
  // `a` (measured for `q`) with its chunk changed to `chunk` positions (a
  // multimodal prompt's chunk cut to its spans; 0: it does not start).
  void SetChunk(const SequenceKv& seq, const AdmissionQuery& q, int32_t chunk,
                KvAdmission* a) const;
  // Blocks to keep free beside an admission: the watermark, which leaves
  // running sequences room to grow, or none when nobody runs (there is
  // nobody to protect, and insisting could block a large request forever).
  int32_t AdmissionHeadroom(bool anyone_running) const {
    return anyone_running ? watermark_blocks_ : 0;
  }
  // Blocks to keep free beside that for `decoding` sequences to grow
  // (KvCacheConfig::growth_headroom_tokens each), never more than the cache.
  int32_t GrowthHeadroom(size_t decoding) const;
  // Takes what `a` (measured for `q` this step) describes: the prefix hits
  // and the last one's private copy (listed in plan->copy_on_write) or the
  // swap-in (plan->swap_in), fresh blocks up to a.total_blocks, the
  // reservation for the rest of its prompt, and its class's reservation.
  void Admit(SequenceKv& seq, RequestId id, const AdmissionQuery& q, const KvAdmission& a,
             StepPlan* plan);
  // The sequence stops running: its prompt's and its class's reservations
  // are given back (its blocks stay until released).
  void StopRunning(SequenceKv& seq, uint32_t cls);
  // Its prompt is computed: the reservation for the rest is given back.
  void FinishPrefill(SequenceKv& seq) { DropPrefillReserve(seq); }

  // --- Growth.

  // Blocks `seq` lacks to hold `positions`.
  int32_t BlocksShort(const SequenceKv& seq, int32_t positions) const {
    return BlocksFor(positions) - seq.num_blocks();
  }
  // Blocks for up to `want` positions, or fewer but at least `min`, within
  // `kv_block_limit`; returns the positions `seq` holds then (at most
  // `want`), or -1, taking nothing, when not even `min` fits.
  int32_t Grow(SequenceKv& seq, uint32_t cls, int32_t want, int32_t min, int32_t kv_block_limit);
  // `want` cut to what a hard-budget class has left for `seq`, or -1 when
  // even `min` is beyond it.
  int32_t CapToHardBudget(const SequenceKv& seq, uint32_t cls, int32_t want, int32_t min) const;
  // Blocks for draft tokens up to `positions`: only what lies beyond the
  // watermark, and nothing when `class_may_grow` is false or the class's
  // budget would be exceeded. Returns the blocks taken.
  int32_t GrowForDrafts(SequenceKv& seq, uint32_t cls, int32_t positions, int32_t kv_block_limit,
                        bool class_may_grow);

  // --- Preemption.

  // Whether preempting `seq` with `computed` positions of KV would swap it
  // out rather than drop it: swap is configured, the sequence may keep its
  // progress (ChainScope::computes_every_position), the host tier has room
  // for its computed blocks, and moving them costs less than recomputing
  // those positions (SchedulerOptions::swap_block_cost_tokens).
  bool SwapsOut(const SequenceKv& seq, int32_t computed) const;
  // Blocks preempting `seq` makes available to a growing sequence
  // (`for_growth`) or to an admission, which also gets back what is
  // reserved for the rest of its prompt.
  int32_t BlocksFreedBy(const SequenceKv& seq, bool for_growth) const {
    return seq.num_blocks() + (for_growth ? 0 : seq.prefill_reserve);
  }
  // Preempts `seq` (no longer running): the blocks past its `computed`
  // positions hold no KV yet and are released; the rest are copied to the
  // host tier (listed in plan->swap_out) when SwapsOut says so. Returns the
  // mode; its device blocks are the caller's to release with the engine's
  // state.
  PreemptionMode Preempt(SequenceKv& seq, uint32_t cls, RequestId id, int32_t computed,
                         StepPlan* plan);

  // --- Release and class moves.

  // Releases the table's tail beyond `keep` blocks (KvManager::ReleaseTail)
  // and the class's count of them.
  void ReleaseTail(SequenceKv& seq, uint32_t cls, size_t keep) {
    classes_.Add(cls, -KvManager::ReleaseTail(seq, keep));
  }
  // `seq`'s blocks, and its reservation while `running`, move from class
  // `from` to `to`, where a sequence of up to `max_blocks` reserves anew.
  void MoveClass(SequenceKv& seq, uint32_t from, uint32_t to, bool running, int32_t max_blocks);

 private:
  void Append(SequenceKv& seq, uint32_t cls, int32_t n) {
    KvManager::Append(seq, n);
    classes_.Add(cls, n);
  }

  const PreemptionMode preemption_mode_;
  const double swap_block_cost_tokens_;
  const int32_t watermark_blocks_;
  const int32_t growth_headroom_tokens_;
  const int32_t num_device_blocks_;
  ClassBlockLedger classes_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_KV_KV_CACHE_MANAGER_H_

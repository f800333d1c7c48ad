#include "kv/kv_cache_manager.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace hearth::internal {

KvCacheManager::KvCacheManager(BlockAllocator allocator, const SchedulerOptions& options)
    : KvManager(std::move(allocator), options.kv.block_size, options.kv.enable_prefix_caching),
      preemption_mode_(options.preemption_mode),
      swap_block_cost_tokens_(options.swap_block_cost_tokens),
      watermark_blocks_(options.kv.watermark_blocks),
      growth_headroom_tokens_(options.kv.growth_headroom_tokens),
      num_device_blocks_(options.kv.num_device_blocks),
      classes_(options.work_classes) {}

int32_t KvCacheManager::GrowthHeadroom(size_t decoding) const {
  // In 64 bits, so that the sum and the doubling backfill applies to it
  // stay in range.
  return static_cast<int32_t>(std::min<int64_t>(
      (static_cast<int64_t>(decoding) * growth_headroom_tokens_ + block_size() - 1) / block_size(),
      num_device_blocks_));
}

KvAdmission KvCacheManager::MeasureAdmission(SequenceKv& seq, const AdmissionQuery& q) {
  KvAdmission a;
  a.swapped = q.swapped;
  a.start = q.computed;
  if (!a.swapped) {
    // Computed from position 0 again: whatever it held is gone, but its
    // prefix may be cached (its own released blocks among them).
    if (!q.tokens.empty() && q.computed == 0) a.hits = FindPrefixHits(seq, q.tokens);
    a.start = a.hits * block_size();
    if (a.start >= q.length) {
      a.start = q.length - 1;
      a.copy_last_hit = true;
    }
  }
  SetChunk(seq, q, std::min(q.length - a.start, q.max_chunk), &a);
  return a;
}

void KvCacheManager::SetChunk(const SequenceKv& seq, const AdmissionQuery& q, int32_t chunk,
                              KvAdmission* out) const {
  KvAdmission& a = *out;
  a.chunk = chunk;
  const int32_t held = a.swapped ? static_cast<int32_t>(seq.host.size()) : a.hits;
  // Copy-on-write replaces the last hit, so the table ends with `total`.
  a.total_blocks = std::max(held, BlocksFor(a.start + a.chunk));
  // A cached, unreferenced hit leaves the allocatable pool when reused.
  a.new_blocks = a.total_blocks - (a.swapped ? 0 : a.hits) + (a.copy_last_hit ? 1 : 0) +
                 CachedAmongHits(a.hits);
  // Where it stands now, before anything is taken: a sequence whose KV
  // reaches its last generated position has no prefill left.
  const bool decoding = q.has_output && q.computed == q.length - 1;
  a.rest_of_prefill = decoding ? 0 : std::max(0, BlocksFor(q.length) - a.total_blocks);
  a.class_reservation = classes_.ReservationFor(q.work_class, BlocksFor(q.max_positions));
}

void KvCacheManager::Admit(SequenceKv& seq, RequestId id, const AdmissionQuery& q,
                           const KvAdmission& a, StepPlan* plan) {
  const uint32_t cls = q.work_class;
  if (a.swapped) {
    classes_.Add(cls, SwapIn(seq, id, &plan->swap_in));
  } else {
    TakeHits(seq, a.hits);
    classes_.Add(cls, a.hits);
    if (a.copy_last_hit) CopyLastOnWrite(seq, id, &plan->copy_on_write);
  }
  Append(seq, cls, std::max(0, a.total_blocks - seq.num_blocks()));
  // Where it stands once admitted: from its hits, a fully cached sequence
  // with output may resume as a decode.
  const int32_t start = a.swapped ? q.computed : a.start;
  if (!(q.has_output && start == q.length - 1)) {
    ReservePrefill(seq, std::max(0, BlocksFor(q.length) - seq.num_blocks()));
  }
  seq.class_reserve = a.class_reservation;
  classes_.Reserve(cls, a.class_reservation);
}

void KvCacheManager::StopRunning(SequenceKv& seq, uint32_t cls) {
  DropPrefillReserve(seq);
  classes_.Reserve(cls, -std::exchange(seq.class_reserve, 0));
}

int32_t KvCacheManager::Grow(SequenceKv& seq, uint32_t cls, int32_t want, int32_t min,
                             int32_t kv_block_limit) {
  const int32_t need_want = BlocksShort(seq, want);
  const int32_t need_min = BlocksShort(seq, min);
  const int32_t free = Allocatable(kv_block_limit);
  if (need_want > free && need_min > free) return -1;
  Append(seq, cls, std::max(0, std::min(need_want, free)));
  return std::min(want, seq.num_blocks() * block_size());
}

int32_t KvCacheManager::CapToHardBudget(const SequenceKv& seq, uint32_t cls, int32_t want,
                                        int32_t min) const {
  const int32_t held = seq.num_blocks();
  const int32_t room = classes_.hard_room(cls);
  if (BlocksFor(min) - held > room) return -1;
  return std::min(want, (held + room) * block_size());
}

int32_t KvCacheManager::GrowForDrafts(SequenceKv& seq, uint32_t cls, int32_t positions,
                                      int32_t kv_block_limit, bool class_may_grow) {
  const int32_t need = BlocksShort(seq, positions);
  const int32_t spare = Allocatable(kv_block_limit) - watermark_blocks_;
  const int32_t take =
      class_may_grow && classes_.Within(cls, need) ? std::clamp(spare, 0, need) : 0;
  Append(seq, cls, take);
  return take;
}

bool KvCacheManager::SwapsOut(const SequenceKv& seq, int32_t computed) const {
  if (preemption_mode_ != PreemptionMode::kSwap || seq.scope.computes_every_position) return false;
  const int32_t valid = BlocksFor(computed);
  return CanSwapOut(static_cast<size_t>(valid)) && computed > 0 &&
         valid * swap_block_cost_tokens_ <= computed;
}

PreemptionMode KvCacheManager::Preempt(SequenceKv& seq, uint32_t cls, RequestId id,
                                       int32_t computed, StepPlan* plan) {
  ReleaseTail(seq, cls, static_cast<size_t>(BlocksFor(computed)));
  if (!SwapsOut(seq, computed)) return PreemptionMode::kRecompute;
  SwapOut(seq, id, &plan->swap_out);
  return PreemptionMode::kSwap;
}

void KvCacheManager::MoveClass(SequenceKv& seq, uint32_t from, uint32_t to, bool running,
                               int32_t max_blocks) {
  classes_.Add(from, -seq.num_blocks());
  classes_.Add(to, seq.num_blocks());
  if (!running) return;
  classes_.Reserve(from, -seq.class_reserve);
  seq.class_reserve = classes_.ReservationFor(to, max_blocks);
  classes_.Reserve(to, seq.class_reserve);
}

}  // namespace hearth::internal

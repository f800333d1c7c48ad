#include "kv/kv_manager.h"

#include <algorithm>
#include <utility>

namespace hearth::internal {

KvManager::KvManager(BlockAllocator allocator, int32_t block_size, bool prefix_caching)
    : block_size_(block_size), allocator_(std::move(allocator)) {
  if (prefix_caching) prefix_cache_.emplace(&allocator_);
}

void KvManager::ExtendHashChain(const ChainScope& scope, absl::Span<const TokenId> tokens,
                                int32_t block_size, size_t blocks,
                                std::vector<uint64_t>* hashes,
                                absl::Span<const EncoderSpan> spans) {
  const auto size = static_cast<size_t>(block_size);
  const auto own_from = static_cast<size_t>(scope.own_from);
  while (hashes->size() < blocks) {
    const size_t b = hashes->size();
    uint64_t parent = b == 0 ? scope.first_parent : hashes->back();
    if (b > 0 && b == own_from) parent = PrefixCache::EnterScope(parent, scope.own_scope);
    const uint64_t salt =
        !spans.empty() ? SpanSalt(spans, static_cast<int64_t>(b * size), block_size)
        : static_cast<int64_t>(b) == scope.tail_block ? scope.tail_salt
                                                      : 0;
    if (salt != 0) parent = PrefixCache::EnterScope(parent, salt);
    hashes->push_back(PrefixCache::HashBlock(parent, tokens.subspan(b * size, size)));
  }
}

void KvManager::Open(SequenceKv& seq, int32_t max_positions, bool has_token_ids,
                     const ChainScope& scope, std::vector<uint64_t> hashes) {
  const auto blocks = static_cast<size_t>(BlocksFor(max_positions)) + 1;
  seq.device.clear();
  DropOversized(seq.device, blocks);
  seq.device.reserve(blocks);
  seq.host.clear();
  DropOversized(seq.host, blocks);
  seq.hashes = std::move(hashes);
  seq.scope = scope;
  if (has_token_ids) seq.hashes.reserve(HashCapacity(max_positions, block_size_));
  seq.registered = 0;
  seq.sent = 0;
  seq.prefill_reserve = 0;
  seq.class_reserve = 0;
  seq.needs_full_table = true;
  seq.resend_table = false;
}

int32_t KvManager::Allocatable(int32_t kv_block_limit) const {
  return std::max(0, std::min(allocator_.num_allocatable(),
                              kv_block_limit - allocator_.num_owned()));
}

void KvManager::AddBlock(SequenceKv& seq, BlockId block) {
  seq.device.push_back(block);
  if (seq.prefill_reserve > 0) {
    --seq.prefill_reserve;
    --prefill_reserved_;
  }
}

void KvManager::Append(SequenceKv& seq, int32_t n) {
  for (int32_t i = 0; i < n; ++i) AddBlock(seq, *allocator_.Allocate());
}

int32_t KvManager::ReleaseTail(SequenceKv& seq, size_t keep) {
  int32_t released = 0;
  while (seq.device.size() > keep) {
    // Cannot fail: the table holds exactly one reference per entry.
    (void)allocator_.Release(seq.device.back());
    seq.device.pop_back();
    ++released;
  }
  seq.registered = std::min<int32_t>(seq.registered, static_cast<int32_t>(keep));
  if (seq.sent > static_cast<int32_t>(keep)) {
    seq.sent = static_cast<int32_t>(keep);
    seq.resend_table = true;
  }
  return released;
}

int32_t KvManager::FindPrefixHits(SequenceKv& seq, absl::Span<const TokenId> tokens) {
  hit_blocks_.clear();
  if (!prefix_cache_.has_value() || !seq.scope.cached || seq.scope.computes_every_position) {
    return 0;
  }
  // Hashes of generated tokens' full blocks are computed lazily, so a
  // sequence recomputed after preemption also finds its own released blocks.
  const size_t full = tokens.size() / static_cast<size_t>(block_size_);
  ExtendHashChain(seq.scope, tokens, block_size_, full, &seq.hashes);
  for (size_t b = 0; b < full; ++b) {
    const BlockId block = prefix_cache_->Find(seq.hashes[b]);
    if (!block.valid()) break;
    hit_blocks_.push_back(block);
  }
  return static_cast<int32_t>(hit_blocks_.size());
}

int32_t KvManager::CachedAmongHits(int32_t hits) const {
  int32_t cached = 0;
  for (int32_t b = 0; b < hits; ++b) {
    if (allocator_.state(hit_blocks_[static_cast<size_t>(b)]) == BlockState::kCached) ++cached;
  }
  return cached;
}

void KvManager::TakeHits(SequenceKv& seq, int32_t hits) {
  for (int32_t b = 0; b < hits; ++b) {
    const BlockId block = hit_blocks_[static_cast<size_t>(b)];
    (void)allocator_.AddRef(block);
    AddBlock(seq, block);
  }
  seq.registered = hits;
}

void KvManager::CopyLastOnWrite(SequenceKv& seq, RequestId id, std::vector<BlockCopy>* copies) {
  const CopyOnWrite cow = *allocator_.PrepareWrite(seq.device.back());
  if (cow.copy_from.valid()) {
    copies->push_back({id, cow.copy_from, cow.block});
    seq.device.back() = cow.block;
  }
}

void KvManager::RegisterFullBlocks(SequenceKv& seq, absl::Span<const TokenId> tokens,
                                   int32_t computed) {
  if (!prefix_cache_.has_value() || !seq.scope.cached) return;
  const int32_t full = std::min<int32_t>(computed / block_size_,
                                         static_cast<int32_t>(seq.device.size()));
  if (seq.registered >= full) return;
  ExtendHashChain(seq.scope, tokens, block_size_, static_cast<size_t>(full), &seq.hashes);
  for (; seq.registered < full; ++seq.registered) {
    const auto b = static_cast<size_t>(seq.registered);
    // False when another block already holds this prefix: keep ours private.
    (void)prefix_cache_->Insert(seq.hashes[b], seq.device[b]);
  }
}

void KvManager::SwapOut(SequenceKv& seq, RequestId id, std::vector<BlockCopy>* copies) {
  for (BlockId device : seq.device) {
    const BlockId host = *allocator_.AllocateHost();
    copies->push_back({id, device, host});
    seq.host.push_back(host);
  }
}

int32_t KvManager::SwapIn(SequenceKv& seq, RequestId id, std::vector<BlockCopy>* copies) {
  for (BlockId host : seq.host) {
    const BlockId device = *allocator_.Allocate();
    copies->push_back({id, host, device});
    AddBlock(seq, device);
    host_release_after_step_.push_back(host);
  }
  const auto taken = static_cast<int32_t>(seq.host.size());
  seq.host.clear();
  return taken;
}

void KvManager::ReleaseHost(SequenceKv& seq) {
  for (BlockId b : seq.host) (void)allocator_.ReleaseHost(b);
  seq.host.clear();
}

void KvManager::DeferHostRelease(SequenceKv& seq) {
  host_release_after_step_.insert(host_release_after_step_.end(), seq.host.begin(),
                                  seq.host.end());
  seq.host.clear();
}

void KvManager::ReleaseDeferredHost(size_t count) {
  count = std::min(count, host_release_after_step_.size());
  for (size_t i = 0; i < count; ++i) (void)allocator_.ReleaseHost(host_release_after_step_[i]);
  host_release_after_step_.erase(host_release_after_step_.begin(),
                                 host_release_after_step_.begin() + static_cast<ptrdiff_t>(count));
}

void KvManager::ReservePrefill(SequenceKv& seq, int32_t blocks) {
  seq.prefill_reserve = blocks;
  prefill_reserved_ += blocks;
}

void KvManager::DropPrefillReserve(SequenceKv& seq) {
  prefill_reserved_ -= std::exchange(seq.prefill_reserve, 0);
}

}  // namespace hearth::internal

// File: src/kv/prefix_cache.h
//
// `PrefixCache` maps chained block hashes to device blocks, so a request whose
// prompt starts with the same full blocks as an earlier one reuses their KV
// and skips their prefill. A block's hash covers its tokens and, through the
// parent hash, every token before it, so equal hashes mean equal prefixes
// (up to 64-bit collisions: about n^2 / 2^65 for n cached blocks).
//
// Only full blocks are cached. Cached blocks that no sequence references stay
// allocatable: the BlockAllocator evicts them least-recently-released first
// and tells this cache, which forgets them.
//
// Scopes. The cache itself is one map; what keeps scopes apart is the chain.
// A scope (a member's own, or one shared by name: RequestSpec::cache_scope)
// enters a sequence's chain at the scope's first block, through EnterScope()
// on that block's parent hash, so every later hash depends on it and equal
// tokens in two scopes give unrelated hashes. A lookup in one scope can only
// find a block of another through a 64-bit collision, which a member cannot
// aim for without the scheduler's key (KvCacheConfig::prefix_hash_key).
//
// Thread-safety: none; engine thread only. HashBlock() is a pure function and
// may be called from any thread.
//
// Example:
//   auto alloc = hearth::BlockAllocator::Create({.num_device_blocks = 64});
//   hearth::PrefixCache cache(&*alloc);
//   std::vector<hearth::TokenId> prompt(40, 7);
//   const uint64_t alice = hearth::PrefixCache::MemberScope(/*key=*/0, hearth::UserId(0));
//   uint64_t h = hearth::PrefixCache::HashBlock(
//       hearth::PrefixCache::EnterScope(hearth::PrefixCache::RootHash(hearth::ModelId(0)), alice),
//       absl::MakeConstSpan(prompt).first(16));      // the first full block
//   hearth::BlockId hit = cache.Find(h);             // invalid: nothing cached

#ifndef HEARTH_SRC_KV_PREFIX_CACHE_H_
#define HEARTH_SRC_KV_PREFIX_CACHE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "kv/block_allocator.h"

namespace hearth {

class PrefixCache : public BlockEvictionListener {
 public:
  // Parent hash of a sequence's first block. Mix the model id in with
  // RootHash() so that different models never share blocks.
  static constexpr uint64_t kRootHash = 0x9e3779b97f4a7c15ull;
  static uint64_t RootHash(ModelId model);
  static uint64_t HashBlock(uint64_t parent_hash,
                            absl::Span<const TokenId> tokens);
  // Scope keys under the scheduler's `key`: a member's own scope, and a
  // scope shared by `name`. The two kinds are derived apart, so no name
  // gives a member's key (up to 64-bit collisions).
  static uint64_t MemberScope(uint64_t key, UserId user);
  static uint64_t NamedScope(uint64_t key, std::string_view name);
  // The parent hash of a scope's first block: `parent` (RootHash of the
  // model for a chain's first block, or the last hash of the scope before)
  // with the scope's key mixed in.
  static uint64_t EnterScope(uint64_t parent, uint64_t scope);

  // REQUIRES: `allocator` outlives this cache. Registers itself as the
  // allocator's eviction listener and reserves room for every device block, so
  // Insert never allocates.
  explicit PrefixCache(BlockAllocator* allocator);
  ~PrefixCache() override;
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // The block holding `hash`, or an invalid id. Takes no reference: call
  // BlockAllocator::AddRef to use it.
  BlockId Find(uint64_t hash) const;
  // Records that owned, full `block` holds `hash`. Returns false (and changes
  // nothing) when the hash is already cached in another block or the block
  // already holds a hash. InvalidArgument for a block that is not owned.
  absl::StatusOr<bool> Insert(uint64_t hash, BlockId block);
  // Number of cached blocks (referenced or not).
  int32_t size() const { return static_cast<int32_t>(map_.size()); }
  bool contains_block(BlockId block) const;

  void OnEvict(BlockId block) override;

 private:
  BlockAllocator* allocator_;
  absl::flat_hash_map<uint64_t, BlockId> map_;
  std::vector<uint64_t> hash_of_block_;
  std::vector<uint8_t> has_hash_;
};

}  // namespace hearth

#endif  // HEARTH_SRC_KV_PREFIX_CACHE_H_

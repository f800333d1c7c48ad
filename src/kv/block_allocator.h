// File: src/kv/block_allocator.h
//
// `BlockAllocator` hands out fixed-size KV-cache blocks ("pages") from a device
// tier and, optionally, a host tier used for swapping. It tracks a reference
// count per device block so that prefix-cache hits and forks share blocks, and
// implements copy-on-write for writes into shared blocks.
//
// Every device block is in exactly one state:
//   kFree    - unreferenced, holds nothing anyone wants;
//   kCached  - unreferenced but holds a prefix-cache entry; allocatable, by
//              evicting the least recently released one first;
//   kOwned   - referenced by one or more sequences (ref_count >= 1).
// num_free() + num_cached() + num_owned() == num_device_blocks() always.
//
// All operations are O(1) and allocation-free after Create(). Misuse (releasing
// a free block, unknown ids) returns an error and changes nothing.
//
// Thread-safety: none; the scheduler uses it from the engine thread only.
//
// Example:
//   auto alloc = hearth::BlockAllocator::Create({.num_device_blocks = 1024});
//   absl::StatusOr<hearth::BlockId> b = alloc->Allocate();
//   alloc->Release(*b).IgnoreError();

#ifndef HEARTH_SRC_KV_BLOCK_ALLOCATOR_H_
#define HEARTH_SRC_KV_BLOCK_ALLOCATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hearth/common/ids.h"

namespace hearth {

struct BlockAllocatorOptions {
  // Device (GPU) blocks. Must be in [1, 2^24].
  int32_t num_device_blocks = 0;
  // Host (CPU) blocks for swap-out. 0 disables swapping. Must be in [0, 2^24].
  int32_t num_host_blocks = 0;
};

enum class BlockState : uint8_t { kFree, kCached, kOwned };

// Told when a cached block is evicted to satisfy an allocation, so that the
// prefix cache can forget it.
class BlockEvictionListener {
 public:
  virtual ~BlockEvictionListener() = default;
  virtual void OnEvict(BlockId block) = 0;
};

// The result of preparing a write into a block that may be shared.
struct CopyOnWrite {
  // The block to write into (the original when it was not shared).
  BlockId block;
  // When valid, the engine must copy `copy_from` into `block` before writing.
  BlockId copy_from;
};

class BlockAllocator {
 public:
  static absl::StatusOr<BlockAllocator> Create(
      const BlockAllocatorOptions& options);

  BlockAllocator(BlockAllocator&&) = default;
  BlockAllocator& operator=(BlockAllocator&&) = default;

  // --- Device tier.

  // A block with ref_count 1. Takes a free block if any, else evicts the least
  // recently released cached block. ResourceExhausted when neither exists.
  absl::StatusOr<BlockId> Allocate();
  // Adds a reference. A kCached block becomes kOwned again (a prefix hit).
  absl::Status AddRef(BlockId block);
  // Drops a reference. At zero the block becomes kCached if it is cacheable,
  // else kFree.
  absl::Status Release(BlockId block);
  // Marks an owned block as holding a prefix-cache entry (or not). Only the
  // PrefixCache calls this.
  absl::Status SetCacheable(BlockId block, bool cacheable);
  // Before writing into `block` (owned by the caller): if others share it,
  // allocates a private copy target and drops the caller's reference to the
  // original. ResourceExhausted when a copy is needed and nothing is free.
  absl::StatusOr<CopyOnWrite> PrepareWrite(BlockId block);

  int32_t num_device_blocks() const { return static_cast<int32_t>(ref_.size()); }
  int32_t num_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t num_cached() const { return num_cached_; }
  int32_t num_owned() const { return num_device_blocks() - num_free() - num_cached(); }
  // Blocks an Allocate() could return right now: free plus cached.
  int32_t num_allocatable() const { return num_free() + num_cached(); }
  // 0 for free and cached blocks, and for ids out of range.
  int32_t ref_count(BlockId block) const;
  BlockState state(BlockId block) const;
  bool cacheable(BlockId block) const;

  // --- Host tier.

  absl::StatusOr<BlockId> AllocateHost();
  absl::Status ReleaseHost(BlockId block);
  int32_t num_host_blocks() const { return static_cast<int32_t>(host_in_use_.size()); }
  int32_t num_free_host() const { return static_cast<int32_t>(host_free_.size()); }
  bool host_in_use(BlockId block) const;

  // Not owned; may be null. Must outlive the allocator or be reset.
  void set_eviction_listener(BlockEvictionListener* listener) {
    listener_ = listener;
  }

 private:
  static constexpr uint32_t kNil = 0xffffffffu;
  BlockAllocator() = default;

  bool InRange(BlockId block) const {
    return block.valid() && block.value() < ref_.size();
  }
  void LruPushBack(uint32_t b);
  void LruUnlink(uint32_t b);

  std::vector<int32_t> ref_;
  std::vector<uint8_t> cacheable_;
  // Stack of free block ids; popping the back reuses the most recently freed.
  std::vector<uint32_t> free_;
  // Intrusive doubly linked LRU list of kCached blocks; head is evicted first.
  std::vector<uint32_t> lru_prev_;
  std::vector<uint32_t> lru_next_;
  std::vector<uint8_t> in_lru_;
  uint32_t lru_head_ = kNil;
  uint32_t lru_tail_ = kNil;
  int32_t num_cached_ = 0;

  std::vector<uint32_t> host_free_;
  std::vector<uint8_t> host_in_use_;

  BlockEvictionListener* listener_ = nullptr;
};

}  // namespace hearth

#endif  // HEARTH_SRC_KV_BLOCK_ALLOCATOR_H_

#include "kv/block_allocator.h"

#include "absl/strings/str_cat.h"

namespace hearth {
namespace {

// About 22 bytes of bookkeeping per device block: 2^24 keeps the largest
// allocator under 400 MB, far beyond any device's KV cache in blocks.
constexpr int32_t kMaxBlocks = 1 << 24;

absl::Status OutOfRange(BlockId block, int32_t n, const char* tier) {
  return absl::InvalidArgumentError(absl::StrCat(
      tier, " block ", block.valid() ? absl::StrCat(block.value()) : "<invalid>",
      " is out of range; valid ids are [0, ", n, ")"));
}

}  // namespace

absl::StatusOr<BlockAllocator> BlockAllocator::Create(
    const BlockAllocatorOptions& options) {
  if (options.num_device_blocks < 1 || options.num_device_blocks > kMaxBlocks) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_device_blocks is ", options.num_device_blocks,
                     "; must be in [1, ", kMaxBlocks, "]"));
  }
  if (options.num_host_blocks < 0 || options.num_host_blocks > kMaxBlocks) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_host_blocks is ", options.num_host_blocks,
                     "; must be in [0, ", kMaxBlocks, "]"));
  }
  BlockAllocator a;
  const auto n = static_cast<size_t>(options.num_device_blocks);
  a.ref_.assign(n, 0);
  a.cacheable_.assign(n, 0);
  a.lru_prev_.assign(n, kNil);
  a.lru_next_.assign(n, kNil);
  a.in_lru_.assign(n, 0);
  // Highest id at the bottom so blocks come out 0, 1, 2, ... from a fresh
  // allocator: easier to read in plans and traces.
  a.free_.reserve(n);
  for (size_t i = n; i-- > 0;) a.free_.push_back(static_cast<uint32_t>(i));
  const auto h = static_cast<size_t>(options.num_host_blocks);
  a.host_in_use_.assign(h, 0);
  a.host_free_.reserve(h);
  for (size_t i = h; i-- > 0;) a.host_free_.push_back(static_cast<uint32_t>(i));
  return a;
}

void BlockAllocator::LruPushBack(uint32_t b) {
  lru_prev_[b] = lru_tail_;
  lru_next_[b] = kNil;
  if (lru_tail_ != kNil) lru_next_[lru_tail_] = b; else lru_head_ = b;
  lru_tail_ = b;
  in_lru_[b] = 1;
  ++num_cached_;
}

void BlockAllocator::LruUnlink(uint32_t b) {
  const uint32_t p = lru_prev_[b], n = lru_next_[b];
  if (p != kNil) lru_next_[p] = n; else lru_head_ = n;
  if (n != kNil) lru_prev_[n] = p; else lru_tail_ = p;
  lru_prev_[b] = lru_next_[b] = kNil;
  in_lru_[b] = 0;
  --num_cached_;
}

absl::StatusOr<BlockId> BlockAllocator::Allocate() {
  uint32_t b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (lru_head_ != kNil) {
    b = lru_head_;
    LruUnlink(b);
    cacheable_[b] = 0;
    if (listener_ != nullptr) listener_->OnEvict(BlockId(b));
  } else {
    return absl::ResourceExhaustedError(absl::StrCat(
        "all ", ref_.size(), " device blocks are in use"));
  }
  ref_[b] = 1;
  return BlockId(b);
}

absl::Status BlockAllocator::AddRef(BlockId block) {
  if (!InRange(block)) return OutOfRange(block, num_device_blocks(), "device");
  const uint32_t b = block.value();
  if (ref_[b] == 0) {
    if (!in_lru_[b]) {
      return absl::FailedPreconditionError(
          absl::StrCat("device block ", b, " is free; only owned or cached "
                       "blocks can gain a reference"));
    }
    LruUnlink(b);
  }
  ++ref_[b];
  return absl::OkStatus();
}

absl::Status BlockAllocator::Release(BlockId block) {
  if (!InRange(block)) return OutOfRange(block, num_device_blocks(), "device");
  const uint32_t b = block.value();
  if (ref_[b] == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("device block ", b, " is not owned; release it only "
                     "while it holds a reference"));
  }
  if (--ref_[b] == 0) {
    if (cacheable_[b]) LruPushBack(b); else free_.push_back(b);
  }
  return absl::OkStatus();
}

absl::Status BlockAllocator::SetCacheable(BlockId block, bool cacheable) {
  if (!InRange(block)) return OutOfRange(block, num_device_blocks(), "device");
  if (ref_[block.value()] == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device block ", block.value(), " is not owned; only owned blocks "
        "change cacheability"));
  }
  cacheable_[block.value()] = cacheable ? 1 : 0;
  return absl::OkStatus();
}

absl::StatusOr<CopyOnWrite> BlockAllocator::PrepareWrite(BlockId block) {
  if (!InRange(block)) return OutOfRange(block, num_device_blocks(), "device");
  const uint32_t b = block.value();
  if (ref_[b] == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device block ", b, " is not owned; write only into owned blocks"));
  }
  if (ref_[b] == 1) return CopyOnWrite{block, BlockId()};
  absl::StatusOr<BlockId> fresh = Allocate();
  if (!fresh.ok()) return fresh.status();
  --ref_[b];  // Still >= 1: the other sharers keep it.
  return CopyOnWrite{*fresh, block};
}

int32_t BlockAllocator::ref_count(BlockId block) const {
  return InRange(block) ? ref_[block.value()] : 0;
}

BlockState BlockAllocator::state(BlockId block) const {
  if (!InRange(block)) return BlockState::kFree;
  const uint32_t b = block.value();
  if (ref_[b] > 0) return BlockState::kOwned;
  return in_lru_[b] ? BlockState::kCached : BlockState::kFree;
}

bool BlockAllocator::cacheable(BlockId block) const {
  return InRange(block) && cacheable_[block.value()] != 0;
}

absl::StatusOr<BlockId> BlockAllocator::AllocateHost() {
  if (host_free_.empty()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "all ", host_in_use_.size(), " host blocks are in use"));
  }
  const uint32_t b = host_free_.back();
  host_free_.pop_back();
  host_in_use_[b] = 1;
  return BlockId(b);
}

absl::Status BlockAllocator::ReleaseHost(BlockId block) {
  if (!block.valid() || block.value() >= host_in_use_.size()) {
    return OutOfRange(block, num_host_blocks(), "host");
  }
  if (!host_in_use_[block.value()]) {
    return absl::FailedPreconditionError(absl::StrCat(
        "host block ", block.value(), " is not in use"));
  }
  host_in_use_[block.value()] = 0;
  host_free_.push_back(block.value());
  return absl::OkStatus();
}

bool BlockAllocator::host_in_use(BlockId block) const {
  return block.valid() && block.value() < host_in_use_.size() &&
         host_in_use_[block.value()] != 0;
}

}  // namespace hearth

#include "kv/prefix_cache.h"

#include "absl/strings/str_cat.h"

namespace hearth {
namespace {

// splitmix64's finaliser: a cheap, well-mixing bijection. A hash of our own
// (not absl::Hash, which is seeded per process) keeps block hashes identical
// across runs, so plans are reproducible byte for byte.
constexpr uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace

uint64_t PrefixCache::RootHash(ModelId model) {
  return Mix(kRootHash ^ (static_cast<uint64_t>(model.value()) + 1));
}

uint64_t PrefixCache::MemberScope(uint64_t key, UserId user) {
  return Mix(Mix(key ^ 0x6d656d6265720001ull) ^ (static_cast<uint64_t>(user.value()) + 1));
}

uint64_t PrefixCache::NamedScope(uint64_t key, std::string_view name) {
  uint64_t h = Mix(Mix(key ^ 0x6e616d6564000002ull) ^ name.size());
  size_t i = 0;
  for (; i + 8 <= name.size(); i += 8) {
    uint64_t word = 0;
    for (size_t k = 0; k < 8; ++k) {
      word |= static_cast<uint64_t>(static_cast<unsigned char>(name[i + k])) << (8 * k);
    }
    h = Mix(h ^ word) + 0x632be59bd9b4e019ull;
  }
  uint64_t tail = 0;
  for (size_t k = 0; i + k < name.size(); ++k) {
    tail |= static_cast<uint64_t>(static_cast<unsigned char>(name[i + k])) << (8 * k);
  }
  return Mix(h ^ tail ^ 0xff00000000000000ull);
}

uint64_t PrefixCache::EnterScope(uint64_t parent, uint64_t scope) {
  return Mix(parent ^ Mix(scope + 0x73636f7065000003ull));
}

uint64_t PrefixCache::HashBlock(uint64_t parent_hash,
                                absl::Span<const TokenId> tokens) {
  uint64_t h = Mix(parent_hash ^ (tokens.size() * 0x9e3779b97f4a7c15ull));
  size_t i = 0;
  // Two tokens per round halves the multiply chain.
  for (; i + 1 < tokens.size(); i += 2) {
    const uint64_t pair = (static_cast<uint64_t>(static_cast<uint32_t>(tokens[i])) << 32) |
                          static_cast<uint32_t>(tokens[i + 1]);
    h = Mix(h ^ pair) + 0x632be59bd9b4e019ull;
  }
  if (i < tokens.size()) h = Mix(h ^ static_cast<uint32_t>(tokens[i]));
  return h;
}

PrefixCache::PrefixCache(BlockAllocator* allocator) : allocator_(allocator) {
  const auto n = static_cast<size_t>(allocator_->num_device_blocks());
  map_.reserve(n);
  hash_of_block_.assign(n, 0);
  has_hash_.assign(n, 0);
  allocator_->set_eviction_listener(this);
}

PrefixCache::~PrefixCache() { allocator_->set_eviction_listener(nullptr); }

BlockId PrefixCache::Find(uint64_t hash) const {
  auto it = map_.find(hash);
  return it == map_.end() ? BlockId() : it->second;
}

absl::StatusOr<bool> PrefixCache::Insert(uint64_t hash, BlockId block) {
  if (allocator_->state(block) != BlockState::kOwned) {
    return absl::InvalidArgumentError(absl::StrCat(
        "block ", block.valid() ? absl::StrCat(block.value()) : "<invalid>",
        " is not an owned device block; only owned, full blocks can be cached"));
  }
  const uint32_t b = block.value();
  if (has_hash_[b]) return false;
  auto [it, inserted] = map_.try_emplace(hash, block);
  if (!inserted) return false;
  hash_of_block_[b] = hash;
  has_hash_[b] = 1;
  absl::Status s = allocator_->SetCacheable(block, true);
  if (!s.ok()) {
    map_.erase(it);
    has_hash_[b] = 0;
    return s;
  }
  return true;
}

bool PrefixCache::contains_block(BlockId block) const {
  return block.valid() && block.value() < has_hash_.size() &&
         has_hash_[block.value()] != 0;
}

void PrefixCache::OnEvict(BlockId block) {
  const uint32_t b = block.value();
  if (b >= has_hash_.size() || !has_hash_[b]) return;
  map_.erase(hash_of_block_[b]);
  has_hash_[b] = 0;
}

}  // namespace hearth

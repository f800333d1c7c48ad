#include "kv/block_allocator.h"

#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "kv/prefix_cache.h"

namespace hearth {
namespace {

BlockAllocator Make(int32_t device, int32_t host = 0) {
  auto a = BlockAllocator::Create({.num_device_blocks = device, .num_host_blocks = host});
  REQUIRE(a.ok());
  return std::move(*a);
}

TEST_CASE("BlockAllocator rejects bad sizes with a message", "[kv]") {
  auto a = BlockAllocator::Create({.num_device_blocks = 0});
  REQUIRE(a.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(a.status().message()).find("num_device_blocks") != std::string::npos);
  CHECK(BlockAllocator::Create({.num_device_blocks = 4, .num_host_blocks = -1}).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Allocate until exhausted, then release restores everything", "[kv]") {
  BlockAllocator a = Make(8);
  std::vector<BlockId> got;
  for (int i = 0; i < 8; ++i) {
    auto b = a.Allocate();
    REQUIRE(b.ok());
    got.push_back(*b);
  }
  CHECK(a.Allocate().status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(a.num_owned() == 8);
  for (BlockId b : got) REQUIRE(a.Release(b).ok());
  CHECK(a.num_free() == 8);
  CHECK(a.Release(got[0]).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(a.Release(BlockId(99)).code() == absl::StatusCode::kInvalidArgument);
  CHECK(a.AddRef(got[0]).code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("Copy-on-write copies only shared blocks", "[kv]") {
  BlockAllocator a = Make(4);
  BlockId b = *a.Allocate();
  auto same = a.PrepareWrite(b);
  REQUIRE(same.ok());
  CHECK(same->block == b);
  CHECK_FALSE(same->copy_from.valid());
  REQUIRE(a.AddRef(b).ok());  // A second sequence shares it.
  auto cow = a.PrepareWrite(b);
  REQUIRE(cow.ok());
  CHECK(cow->block != b);
  CHECK(cow->copy_from == b);
  CHECK(a.ref_count(b) == 1);
  CHECK(a.ref_count(cow->block) == 1);
}

TEST_CASE("Cached blocks are evicted least recently released first", "[kv]") {
  BlockAllocator a = Make(3);
  PrefixCache cache(&a);
  BlockId b0 = *a.Allocate(), b1 = *a.Allocate(), b2 = *a.Allocate();
  REQUIRE(*cache.Insert(100, b0));
  REQUIRE(*cache.Insert(101, b1));
  REQUIRE(a.Release(b1).ok());  // Released first: evicted first.
  REQUIRE(a.Release(b0).ok());
  CHECK(a.num_cached() == 2);
  CHECK(a.num_free() == 0);
  BlockId x = *a.Allocate();
  CHECK(x == b1);
  CHECK_FALSE(cache.Find(101).valid());
  CHECK(cache.Find(100) == b0);
  // A hit revives a cached block.
  REQUIRE(a.AddRef(b0).ok());
  CHECK(a.state(b0) == BlockState::kOwned);
  CHECK(a.Allocate().status().code() == absl::StatusCode::kResourceExhausted);
  (void)b2;
}

TEST_CASE("PrefixCache keeps one block per hash and only owned blocks", "[kv]") {
  BlockAllocator a = Make(4);
  PrefixCache cache(&a);
  BlockId b0 = *a.Allocate(), b1 = *a.Allocate();
  CHECK(*cache.Insert(7, b0));
  CHECK_FALSE(*cache.Insert(7, b1));  // Same prefix elsewhere: keep the first.
  CHECK_FALSE(*cache.Insert(8, b0));  // A block holds one hash.
  CHECK(cache.Insert(9, BlockId(3)).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(cache.size() == 1);
}

TEST_CASE("Chained hashes depend on every earlier token", "[kv]") {
  std::vector<TokenId> a = {1, 2, 3, 4}, b = {1, 2, 3, 5};
  const uint64_t root = PrefixCache::RootHash(ModelId(0));
  CHECK(PrefixCache::HashBlock(root, a) != PrefixCache::HashBlock(root, b));
  CHECK(PrefixCache::HashBlock(root, a) == PrefixCache::HashBlock(root, a));
  CHECK(PrefixCache::RootHash(ModelId(0)) != PrefixCache::RootHash(ModelId(1)));
  const uint64_t h1 = PrefixCache::HashBlock(root, a);
  CHECK(PrefixCache::HashBlock(h1, a) != PrefixCache::HashBlock(root, a));
}

TEST_CASE("Random allocator operations conserve blocks", "[kv][property]") {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    std::mt19937_64 rng(seed);
    const int32_t n = 1 + static_cast<int32_t>(rng() % 64);
    BlockAllocator a = Make(n, 8);
    PrefixCache cache(&a);
    std::vector<BlockId> held;  // One entry per reference.
    uint64_t next_hash = 1;
    for (int op = 0; op < 500; ++op) {
      switch (rng() % 5) {
        case 0: case 1: {
          auto b = a.Allocate();
          if (b.ok()) held.push_back(*b);
          else CHECK(a.num_allocatable() == 0);
          break;
        }
        case 2:
          if (!held.empty()) {
            const size_t i = rng() % held.size();
            REQUIRE(a.Release(held[i]).ok());
            held.erase(held.begin() + static_cast<long>(i));
          }
          break;
        case 3:
          if (!held.empty()) (void)cache.Insert(next_hash++, held[rng() % held.size()]);
          break;
        case 4:
          if (!held.empty()) {
            const BlockId b = held[rng() % held.size()];
            REQUIRE(a.AddRef(b).ok());
            held.push_back(b);
          }
          break;
      }
      std::vector<int32_t> refs(static_cast<size_t>(n), 0);
      for (BlockId b : held) ++refs[b.value()];
      int32_t owned = 0;
      for (int32_t b = 0; b < n; ++b) {
        REQUIRE(a.ref_count(BlockId(b)) == refs[static_cast<size_t>(b)]);
        if (refs[static_cast<size_t>(b)] > 0) ++owned;
        if (a.state(BlockId(b)) == BlockState::kCached) REQUIRE(cache.contains_block(BlockId(b)));
      }
      REQUIRE(a.num_owned() == owned);
      REQUIRE(a.num_free() + a.num_cached() + a.num_owned() == n);
    }
  }
}

TEST_CASE("Host tier allocates and releases independently", "[kv]") {
  BlockAllocator a = Make(2, 2);
  BlockId h0 = *a.AllocateHost(), h1 = *a.AllocateHost();
  CHECK(a.AllocateHost().status().code() == absl::StatusCode::kResourceExhausted);
  REQUIRE(a.ReleaseHost(h0).ok());
  CHECK(a.ReleaseHost(h0).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(a.ReleaseHost(BlockId(5)).code() == absl::StatusCode::kInvalidArgument);
  CHECK(a.num_free_host() == 1);
  CHECK(a.host_in_use(h1));
  CHECK(a.num_free() == 2);
}

}  // namespace
}  // namespace hearth

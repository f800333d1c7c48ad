// Cache scopes in the prefix-hash chain (src/kv/chain_scope.h): which block
// hashes two requests share, as properties over random prompts and members.

#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/container/flat_hash_set.h"
#include "kv/prefix_cache.h"
#include "hearth/request/request_spec.h"
#include "kv/chain_scope.h"
#include "kv/kv_manager.h"

namespace hearth {
namespace {

using internal::ChainScope;
using internal::KvManager;
using internal::ResolveChainScope;

constexpr int32_t kBlock = 16;

std::vector<uint64_t> Chain(const RequestSpec& spec, uint64_t key = 0) {
  const ChainScope scope = ResolveChainScope(spec, key, kBlock);
  std::vector<uint64_t> hashes;
  KvManager::ExtendHashChain(scope, spec.prompt_token_ids, kBlock,
                             spec.prompt_token_ids.size() / kBlock, &hashes);
  return hashes;
}

RequestSpec Prompt(uint32_t user, std::vector<TokenId> ids) {
  RequestSpec s;
  s.user = UserId(user);
  s.prompt_tokens = static_cast<int32_t>(ids.size());
  s.prompt_token_ids = std::move(ids);
  s.max_new_tokens = 1;
  return s;
}

std::vector<TokenId> RandomIds(std::mt19937_64& rng, int32_t n) {
  std::vector<TokenId> ids(static_cast<size_t>(n));
  // A small vocabulary, so that equal blocks are common across prompts.
  for (TokenId& t : ids) t = static_cast<TokenId>(rng() % 3);
  return ids;
}

TEST_CASE("cache scope: no block hash of one member's chain is found in another member's",
          "[kv]") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int32_t n = kBlock * static_cast<int32_t>(1 + rng() % 8);
    const std::vector<TokenId> ids = RandomIds(rng, n);
    const auto a = static_cast<uint32_t>(rng() % 5);
    const auto b = (a + 1 + static_cast<uint32_t>(rng() % 4)) % 5;
    // The same tokens under two members, and under a key.
    const std::vector<uint64_t> mine = Chain(Prompt(a, ids));
    const absl::flat_hash_set<uint64_t> theirs_set = [&] {
      std::vector<uint64_t> t = Chain(Prompt(b, ids));
      return absl::flat_hash_set<uint64_t>(t.begin(), t.end());
    }();
    for (uint64_t h : mine) CHECK_FALSE(theirs_set.contains(h));
    // A member's own chain is stable: the same tokens find the same blocks.
    CHECK(Chain(Prompt(a, ids)) == mine);
    // The scheduler's key changes every hash, so chains are not predictable.
    const std::vector<uint64_t> keyed = Chain(Prompt(a, ids), /*key=*/0x5eed);
    for (size_t i = 0; i < mine.size(); ++i) CHECK(keyed[i] != mine[i]);
  }
}

TEST_CASE("cache scope: a named scope is shared by every member and by nobody else", "[kv]") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    const std::vector<TokenId> ids = RandomIds(rng, kBlock * 4);
    RequestSpec alice = Prompt(0, ids);
    RequestSpec bob = Prompt(1, ids);
    alice.cache_scope.name = bob.cache_scope.name = "house";
    CHECK(Chain(alice) == Chain(bob));
    // Neither the members' own scopes nor another name reach it.
    RequestSpec other = bob;
    other.cache_scope.name = "housf";
    for (const RequestSpec& s : {Prompt(0, ids), Prompt(1, ids), other}) {
      const std::vector<uint64_t> h = Chain(s);
      for (size_t i = 0; i < h.size(); ++i) CHECK(h[i] != Chain(alice)[i]);
    }
  }
}

TEST_CASE("cache scope: a shared prefix's whole blocks are shared, the rest is the member's",
          "[kv]") {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    const int32_t blocks = 2 + static_cast<int32_t>(rng() % 6);
    const std::vector<TokenId> ids = RandomIds(rng, kBlock * blocks);
    const int32_t shared = 1 + static_cast<int32_t>(rng() % static_cast<uint64_t>(kBlock * blocks));
    const int32_t shared_blocks = shared / kBlock;
    RequestSpec alice = Prompt(0, ids);
    RequestSpec bob = Prompt(1, ids);
    for (RequestSpec* s : {&alice, &bob}) {
      s->cache_scope.shared_prefix_tokens = shared;
      s->cache_scope.shared_prefix_scope = "template";
    }
    const std::vector<uint64_t> a = Chain(alice);
    const std::vector<uint64_t> b = Chain(bob);
    // The shared scope is one scope, whoever names it and however long a
    // prefix: a whole-request scope of that name has the same blocks.
    RequestSpec named = Prompt(2, ids);
    named.cache_scope.name = "template";
    const std::vector<uint64_t> whole = Chain(named);
    for (int32_t i = 0; i < blocks; ++i) {
      const auto k = static_cast<size_t>(i);
      if (i < shared_blocks) {
        CHECK(a[k] == b[k]);
        CHECK(a[k] == whole[k]);
      } else {
        // The block that extends past the prefix holds the member's tokens.
        CHECK(a[k] != b[k]);
        CHECK(a[k] != whole[k]);
      }
    }
    // Past the prefix, Alice's chain is hers alone: no block of her own
    // scope equals one of Bob's, at any index.
    const absl::flat_hash_set<uint64_t> bobs(b.begin(), b.end());
    for (size_t k = static_cast<size_t>(shared_blocks); k < a.size(); ++k) {
      CHECK_FALSE(bobs.contains(a[k]));
    }
  }
}

TEST_CASE("cache scope: member and named scope keys are derived apart", "[kv]") {
  // Names that spell a user index, in any encoding, never give its key.
  absl::flat_hash_set<uint64_t> members;
  for (uint32_t u = 0; u < 64; ++u) members.insert(PrefixCache::MemberScope(0, UserId(u)));
  for (uint32_t u = 0; u < 64; ++u) {
    for (std::string name : {std::to_string(u), std::string(1, static_cast<char>(u)),
                             std::string(reinterpret_cast<const char*>(&u), sizeof(u))}) {
      CHECK_FALSE(members.contains(PrefixCache::NamedScope(0, name)));
    }
  }
  // Names differing in one byte, or only in length, differ.
  CHECK(PrefixCache::NamedScope(0, "a") != PrefixCache::NamedScope(0, std::string("a\0", 2)));
  CHECK(PrefixCache::NamedScope(0, "12345678") != PrefixCache::NamedScope(0, "12345679"));
  CHECK(PrefixCache::NamedScope(0, "") != PrefixCache::NamedScope(1, ""));
}

TEST_CASE("cache scope: an opted-out sequence neither finds nor registers blocks", "[kv]") {
  auto allocator = BlockAllocator::Create({.num_device_blocks = 16});
  REQUIRE(allocator.ok());
  KvManager kv(*std::move(allocator), kBlock, /*prefix_caching=*/true);
  const std::vector<TokenId> ids(static_cast<size_t>(kBlock * 2), 5);
  RequestSpec spec = Prompt(0, ids);
  const ChainScope cached = ResolveChainScope(spec, 0, kBlock);
  spec.cache_scope.opt_out = true;
  const ChainScope out = ResolveChainScope(spec, 0, kBlock);
  CHECK_FALSE(out.cached);

  internal::SequenceKv first;
  kv.Open(first, kBlock * 3, true, cached, {});
  REQUIRE(kv.FindPrefixHits(first, ids) == 0);
  kv.Append(first, 2);
  kv.RegisterFullBlocks(first, ids, kBlock * 2);
  REQUIRE(kv.prefix_cache()->size() == 2);

  internal::SequenceKv second;
  kv.Open(second, kBlock * 3, true, out, {});
  CHECK(kv.FindPrefixHits(second, ids) == 0);  // Cached, but not for it.
  kv.Append(second, 2);
  kv.RegisterFullBlocks(second, ids, kBlock * 2);
  CHECK(kv.prefix_cache()->size() == 2);
  CHECK_FALSE(kv.prefix_cache()->contains_block(second.device[0]));
  kv.ReleaseTail(second, 0);
  // Its blocks were private: released, they are free, not cached.
  CHECK(kv.allocator().num_free() == 14);
  kv.ReleaseTail(first, 0);
  CHECK(kv.allocator().num_cached() == 2);
}

}  // namespace
}  // namespace hearth

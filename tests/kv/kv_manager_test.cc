// KvManager on its own: under random admissions with prefix hits, growth,
// copy-on-write, swaps and finishes, every block is accounted for: each
// device block's reference count is the number of tables holding it, the
// allocator's owned count is the number of distinct blocks in tables, and
// every host block in use is a swapped sequence's copy or a release
// deferred until its step ran.

#include "kv/kv_manager.h"

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace hearth::internal {
namespace {

constexpr int32_t kBlockSize = 4;
constexpr int32_t kDeviceBlocks = 48;
constexpr int32_t kHostBlocks = 24;
constexpr int32_t kSequences = 6;
constexpr int32_t kMaxPositions = 64;

KvManager MakeManager(bool prefix_caching) {
  auto allocator = BlockAllocator::Create(
      {.num_device_blocks = kDeviceBlocks, .num_host_blocks = kHostBlocks});
  REQUIRE(allocator.ok());
  return KvManager(std::move(*allocator), kBlockSize, prefix_caching);
}

enum class Where { kIdle, kDevice, kSwapped };

struct Sequence {
  SequenceKv kv;
  Where where = Where::kIdle;
  std::vector<TokenId> tokens;
  RequestId id;
};

// Prompts share one of three prefixes, so that admissions hit each other's
// registered blocks.
std::vector<TokenId> Prompt(std::mt19937& rng) {
  const TokenId prefix = static_cast<TokenId>(rng() % 3);
  const int32_t length = 4 + static_cast<int32_t>(rng() % 20);
  std::vector<TokenId> tokens;
  for (int32_t i = 0; i < length; ++i) {
    tokens.push_back(i < 12 ? prefix * 100 + i : static_cast<TokenId>(rng() % 1000));
  }
  return tokens;
}

void CheckBooks(const KvManager& kv, const std::vector<Sequence>& seqs) {
  const BlockAllocator& a = kv.allocator();
  std::map<uint32_t, int32_t> holders;
  int32_t host_held = 0;
  for (const Sequence& s : seqs) {
    for (BlockId b : s.kv.device) ++holders[b.value()];
    host_held += static_cast<int32_t>(s.kv.host.size());
    if (s.where != Where::kDevice) REQUIRE(s.kv.device.empty());
    if (s.where != Where::kSwapped) REQUIRE(s.kv.host.empty());
  }
  for (const auto& [block, count] : holders) {
    REQUIRE(a.ref_count(BlockId(block)) == count);
  }
  REQUIRE(a.num_owned() == static_cast<int32_t>(holders.size()));
  REQUIRE(a.num_free() + a.num_cached() + a.num_owned() == kDeviceBlocks);
  const int32_t host_in_use = a.num_host_blocks() - a.num_free_host();
  REQUIRE(host_in_use == host_held + static_cast<int32_t>(kv.deferred_host_releases().size()));
}

void Admit(KvManager& kv, Sequence& s, std::mt19937& rng, uint64_t* next_id) {
  s.tokens = Prompt(rng);
  s.id = RequestId((*next_id)++);
  std::vector<uint64_t> hashes;
  KvManager::ExtendHashChain(ChainScope{}, s.tokens, kBlockSize,
                             s.tokens.size() / kBlockSize, &hashes);
  kv.Open(s.kv, kMaxPositions, /*has_token_ids=*/true, ChainScope{}, std::move(hashes));
  const int32_t hits = kv.FindPrefixHits(s.kv, s.tokens);
  const int32_t need = kv.BlocksFor(static_cast<int32_t>(s.tokens.size())) - hits;
  // Cached hits leave the allocatable pool when taken, as the planner counts.
  if (kv.Allocatable(kDeviceBlocks) - kv.CachedAmongHits(hits) < need) return;
  kv.TakeHits(s.kv, hits);
  kv.Append(s.kv, need);
  std::vector<BlockCopy> copies;
  // A prompt wholly found writes its next token into a shared block.
  if (need == 0 && hits > 0 && kv.Allocatable(kDeviceBlocks) > 0) {
    kv.CopyLastOnWrite(s.kv, s.id, &copies);
  }
  kv.RegisterFullBlocks(s.kv, s.tokens, static_cast<int32_t>(s.tokens.size()));
  s.where = Where::kDevice;
}

TEST_CASE("KvManager: every block is accounted for under random traffic", "[kv]") {
  const uint32_t seed = GENERATE(1u, 2u, 3u, 4u, 5u, 6u);
  const bool prefix_caching = GENERATE(true, false);
  CAPTURE(seed, prefix_caching);
  std::mt19937 rng(seed);
  KvManager kv = MakeManager(prefix_caching);
  std::vector<Sequence> seqs(kSequences);
  uint64_t next_id = 1;
  int32_t hits_seen = 0;
  for (int op = 0; op < 3000; ++op) {
    Sequence& s = seqs[rng() % kSequences];
    std::vector<BlockCopy> copies;
    switch (s.where) {
      case Where::kIdle:
        Admit(kv, s, rng, &next_id);
        hits_seen += s.kv.registered > 0 && s.where == Where::kDevice;
        break;
      case Where::kDevice: {
        const uint32_t what = rng() % 4;
        if (what == 0 && s.kv.num_blocks() * kBlockSize < kMaxPositions &&
            kv.Allocatable(kDeviceBlocks) > 0) {
          kv.Append(s.kv, 1);  // Growth by a block.
        } else if (what == 1 && kv.CanSwapOut(s.kv.device.size())) {
          kv.SwapOut(s.kv, s.id, &copies);
          REQUIRE(copies.size() == s.kv.host.size());
          kv.ReleaseTail(s.kv, 0);
          kv.ForgetEngineState(s.kv);
          s.where = Where::kSwapped;
        } else if (what == 2) {
          // Recompute preemption or the end: the table goes, cached or free.
          kv.ReleaseTail(s.kv, 0);
          kv.ForgetEngineState(s.kv);
          s.where = Where::kIdle;
        } else if (s.kv.num_blocks() > 1) {
          kv.ReleaseTail(s.kv, s.kv.device.size() - 1);  // Rejected drafts' block.
        }
        break;
      }
      case Where::kSwapped:
        if (rng() % 3 == 0) {
          // Ended while swapped out; the copies may still be in flight.
          kv.DeferHostRelease(s.kv);
          s.where = Where::kIdle;
        } else if (kv.Allocatable(kDeviceBlocks) >= static_cast<int32_t>(s.kv.host.size())) {
          const size_t host = s.kv.host.size();
          REQUIRE(kv.SwapIn(s.kv, s.id, &copies) == static_cast<int32_t>(host));
          REQUIRE(s.kv.device.size() == host);
          s.where = Where::kDevice;
        }
        break;
    }
    CheckBooks(kv, seqs);
    if (op % 7 == 0) {
      kv.ReleaseDeferredHost();  // The step ran.
      CheckBooks(kv, seqs);
    }
  }
  // Finishing everyone returns every block.
  for (Sequence& s : seqs) {
    kv.ReleaseTail(s.kv, 0);
    kv.DeferHostRelease(s.kv);
    s.where = Where::kIdle;
  }
  kv.ReleaseDeferredHost();
  CheckBooks(kv, seqs);
  CHECK(kv.allocator().num_owned() == 0);
  CHECK(kv.allocator().num_free_host() == kHostBlocks);
  // Prefixes are shared by design, so with the cache on admissions hit.
  if (prefix_caching) CHECK(hits_seen > 0);
}

TEST_CASE("KvManager: the engine is sent a table once, then only its new blocks", "[kv]") {
  KvManager kv = MakeManager(false);
  SequenceKv seq;
  kv.Open(seq, kMaxPositions, true, ChainScope{}, {});
  kv.Append(seq, 3);
  ScheduledSequence s;
  kv.FillTables(seq, s);
  CHECK(s.full_block_table);
  CHECK(s.new_blocks.size() == 3);
  kv.Append(seq, 2);
  kv.FillTables(seq, s);
  CHECK_FALSE(s.full_block_table);
  CHECK(s.block_table.size() == 5);
  CHECK(s.new_blocks.size() == 2);
  // Losing sent blocks (rejected drafts) resends the whole table.
  kv.ReleaseTail(seq, 4);
  kv.FillTables(seq, s);
  CHECK(s.full_block_table);
  CHECK(s.block_table.size() == 4);
  // So does dropping the engine's state.
  kv.ReleaseTail(seq, 0);
  CHECK(kv.ForgetEngineState(seq));
  CHECK_FALSE(kv.ForgetEngineState(seq));
  kv.Append(seq, 1);
  kv.FillTables(seq, s);
  CHECK(s.full_block_table);
  CHECK(s.new_blocks.size() == 1);
}

TEST_CASE("KvManager: a prefill reservation is counted once and dropped once", "[kv]") {
  KvManager kv = MakeManager(false);
  SequenceKv a, b;
  kv.Open(a, kMaxPositions, true, ChainScope{}, {});
  kv.Open(b, kMaxPositions, true, ChainScope{}, {});
  kv.ReservePrefill(a, 5);
  kv.ReservePrefill(b, 3);
  CHECK(kv.prefill_reserved() == 8);
  // Blocks taken as the prefill runs come out of the reservation.
  kv.Append(a, 2);
  CHECK(a.prefill_reserve == 3);
  CHECK(kv.prefill_reserved() == 6);
  kv.DropPrefillReserve(a);
  kv.DropPrefillReserve(a);
  CHECK(kv.prefill_reserved() == 3);
  kv.Append(b, 5);
  CHECK(kv.prefill_reserved() == 0);
  CHECK(b.prefill_reserve == 0);
}

}  // namespace
}  // namespace hearth::internal

// Catalogue surface: BlockAllocator, its options and every method's misuse,
// and KvBlocksForMemory's clamps. A misused allocator changes nothing, so
// each row compares its state before and after.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "kv/block_allocator.h"
#include "kv/prefix_cache.h"
#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {
namespace {

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr auto kPrecondition = absl::StatusCode::kFailedPrecondition;
constexpr auto kExhausted = absl::StatusCode::kResourceExhausted;

BadInputRow CreateRow(std::string name, BlockAllocatorOptions options, std::string message_has) {
  return {"kv: Create with " + name,
          [options] { return BlockAllocator::Create(options).status(); }, kInvalid,
          std::move(message_has)};
}

std::vector<BadInputRow> CreateRows() {
  return {
      CreateRow("0 device blocks", {.num_device_blocks = 0}, "num_device_blocks is 0"),
      CreateRow("-1 device blocks", {.num_device_blocks = -1}, "num_device_blocks is -1"),
      CreateRow("INT32_MIN device blocks", {.num_device_blocks = kInt32Min}, "num_device_blocks"),
      CreateRow("2^24 + 1 device blocks", {.num_device_blocks = (1 << 24) + 1},
                "must be in [1, 16777216]"),
      CreateRow("-1 host blocks", {.num_device_blocks = 4, .num_host_blocks = -1},
                "num_host_blocks is -1"),
      CreateRow("2^24 + 1 host blocks", {.num_device_blocks = 4, .num_host_blocks = (1 << 24) + 1},
                "must be in [0, 16777216]"),
      CreateRow("INT32_MAX host blocks", {.num_device_blocks = 4, .num_host_blocks = kInt32Max},
                "num_host_blocks"),
  };
}

// Everything a misuse must leave as it was.
struct AllocatorState {
  int32_t free, cached, owned, free_host;
  std::vector<int32_t> refs;
  bool operator==(const AllocatorState&) const = default;
};

AllocatorState StateOf(const BlockAllocator& a) {
  AllocatorState s{a.num_free(), a.num_cached(), a.num_owned(), a.num_free_host(), {}};
  for (int32_t b = 0; b < a.num_device_blocks(); ++b) s.refs.push_back(a.ref_count(BlockId(b)));
  return s;
}

// An allocator of 4 device and 2 host blocks; blocks 0 and 1 owned, block 1
// shared by two owners, block 2 cached, block 3 free, host block 0 in use.
BlockAllocator Prepared() {
  BlockAllocator a = *BlockAllocator::Create({.num_device_blocks = 4, .num_host_blocks = 2});
  for (int i = 0; i < 3; ++i) REQUIRE(a.Allocate().ok());
  REQUIRE(a.AddRef(BlockId(1)).ok());
  REQUIRE(a.SetCacheable(BlockId(2), true).ok());
  REQUIRE(a.Release(BlockId(2)).ok());
  REQUIRE(a.AllocateHost().ok());
  REQUIRE(a.state(BlockId(2)) == BlockState::kCached);
  REQUIRE(a.state(BlockId(3)) == BlockState::kFree);
  return a;
}

// `misuse` on the prepared allocator, after `setup` (may be null); the
// allocator must be unchanged by the misuse.
BadInputRow MethodRow(std::string name, std::function<void(BlockAllocator&)> setup,
                      std::function<absl::Status(BlockAllocator&)> misuse,
                      absl::StatusCode code, std::string message_has) {
  auto run = [setup = std::move(setup), misuse = std::move(misuse)] {
    BlockAllocator a = Prepared();
    if (setup) setup(a);
    const AllocatorState before = StateOf(a);
    const absl::Status answer = misuse(a);
    CHECK(StateOf(a) == before);
    CHECK(a.num_free() + a.num_cached() + a.num_owned() == a.num_device_blocks());
    return answer;
  };
  return {"kv: " + std::move(name), std::move(run), code, std::move(message_has)};
}

void TakeAll(BlockAllocator& a) {
  while (a.num_allocatable() > 0) REQUIRE(a.Allocate().ok());
}
void TakeAllHost(BlockAllocator& a) {
  while (a.num_free_host() > 0) REQUIRE(a.AllocateHost().ok());
}

std::vector<BadInputRow> DeviceRows() {
  using A = BlockAllocator&;
  const BlockId kOut(4);
  return {
      MethodRow("Allocate with every block owned", TakeAll,
                [](A a) { return a.Allocate().status(); }, kExhausted, "all 4 device blocks"),
      MethodRow("AddRef of a block past the end", nullptr, [=](A a) { return a.AddRef(kOut); },
                kInvalid, "device block 4 is out of range"),
      MethodRow("AddRef of the invalid id", nullptr, [](A a) { return a.AddRef(BlockId()); },
                kInvalid, "device block <invalid>"),
      MethodRow("AddRef of block UINT32_MAX - 1", nullptr,
                [](A a) { return a.AddRef(BlockId(BlockId::kInvalidValue - 1)); }, kInvalid,
                "valid ids are [0, 4)"),
      MethodRow("AddRef of a free block", nullptr, [](A a) { return a.AddRef(BlockId(3)); },
                kPrecondition, "device block 3 is free"),
      MethodRow("Release of a block past the end", nullptr, [=](A a) { return a.Release(kOut); },
                kInvalid, "out of range"),
      MethodRow("Release of a free block", nullptr, [](A a) { return a.Release(BlockId(3)); },
                kPrecondition, "device block 3 is not owned"),
      MethodRow("Release of a cached block", nullptr, [](A a) { return a.Release(BlockId(2)); },
                kPrecondition, "device block 2 is not owned"),
      MethodRow("Release once more than referenced",
                [](A a) { REQUIRE(a.Release(BlockId(0)).ok()); },
                [](A a) { return a.Release(BlockId(0)); }, kPrecondition, "device block 0 is not owned"),
      MethodRow("SetCacheable of a block past the end", nullptr,
                [=](A a) { return a.SetCacheable(kOut, true); }, kInvalid, "out of range"),
      MethodRow("SetCacheable of a free block", nullptr,
                [](A a) { return a.SetCacheable(BlockId(3), true); }, kPrecondition,
                "only owned blocks change cacheability"),
      MethodRow("PrepareWrite of a block past the end", nullptr,
                [=](A a) { return a.PrepareWrite(kOut).status(); }, kInvalid, "out of range"),
      MethodRow("PrepareWrite of a free block", nullptr,
                [](A a) { return a.PrepareWrite(BlockId(3)).status(); }, kPrecondition,
                "write only into owned blocks"),
      MethodRow("PrepareWrite of a shared block with nothing free", TakeAll,
                [](A a) { return a.PrepareWrite(BlockId(1)).status(); }, kExhausted,
                "device blocks are in use"),
  };
}

std::vector<BadInputRow> HostRows() {
  using A = BlockAllocator&;
  return {
      MethodRow("AllocateHost with every host block in use", TakeAllHost,
                [](A a) { return a.AllocateHost().status(); }, kExhausted, "all 2 host blocks"),
      {"kv: AllocateHost without a host tier",
       [] {
         BlockAllocator a = *BlockAllocator::Create({.num_device_blocks = 4});
         return a.AllocateHost().status();
       },
       kExhausted, "all 0 host blocks"},
      MethodRow("ReleaseHost of a host block past the end", nullptr,
                [](A a) { return a.ReleaseHost(BlockId(2)); }, kInvalid,
                "host block 2 is out of range"),
      MethodRow("ReleaseHost of the invalid id", nullptr,
                [](A a) { return a.ReleaseHost(BlockId()); }, kInvalid, "host block <invalid>"),
      MethodRow("ReleaseHost of a free host block", nullptr,
                [](A a) { return a.ReleaseHost(BlockId(1)); }, kPrecondition,
                "host block 1 is not in use"),
  };
}

// PrefixCache::Insert of a block it must not cache; the cache stays empty.
BadInputRow InsertRow(std::string name, BlockId block, std::string message_has) {
  auto run = [block] {
    BlockAllocator a = Prepared();
    PrefixCache cache(&a);
    const absl::Status answer = cache.Insert(42, block).status();
    CHECK(cache.size() == 0);
    CHECK_FALSE(cache.Find(42).valid());
    return answer;
  };
  return {"kv: PrefixCache::Insert of " + std::move(name), std::move(run), kInvalid,
          std::move(message_has)};
}

std::vector<BadInputRow> PrefixCacheRows() {
  return {
      InsertRow("a free block", BlockId(3), "block 3 is not an owned device block"),
      InsertRow("a cached block", BlockId(2), "block 2 is not an owned"),
      InsertRow("a block past the end", BlockId(4), "block 4 is not an owned"),
      InsertRow("the invalid id", BlockId(), "block <invalid>"),
  };
}

}  // namespace

std::vector<BadInputRow> KvRows() {
  std::vector<BadInputRow> rows;
  for (auto part : {CreateRows, DeviceRows, HostRows, PrefixCacheRows}) {
    for (BadInputRow& row : part()) rows.push_back(std::move(row));
  }
  return rows;
}

TEST_CASE("Bad input: BlockAllocator refuses each misuse and changes nothing",
          "[scheduler][bad_input]") {
  RunRows(KvRows());
}

// Not rows: KvBlocksForMemory has no error; hostile sizes clamp to 0 blocks
// (documented "floor; >= 0"), and it must never wrap.
TEST_CASE("Bad input: KvBlocksForMemory clamps hostile sizes instead of wrapping",
          "[scheduler][bad_input]") {
  struct Clamp {
    const char* what;
    int64_t memory, bytes_per_token;
    int32_t block_size, blocks;
  };
  const Clamp clamps[] = {
      {"INT64_MAX bytes per token", int64_t{1} << 34, kInt64Max, 16, 0},
      {"a block of INT64_MAX / 2 * 4096 bytes", kInt64Max, kInt64Max / 2, 4096, 0},
      {"negative memory", -1, 1024, 16, 0},
      {"INT64_MIN memory", kInt64Min, 1024, 16, 0},
      {"zero bytes per token", int64_t{1} << 20, 0, 16, 0},
      {"negative bytes per token", int64_t{1} << 20, -1024, 16, 0},
      {"block size 0", int64_t{1} << 20, 1024, 0, 0},
      {"block size INT32_MIN", int64_t{1} << 20, 1024, kInt32Min, 0},
      {"more blocks than 2^24", kInt64Max, 1, 1, 1 << 24},
      {"an ordinary size, for contrast", int64_t{1} << 20, 1 << 10, 16, 64},
  };
  for (const Clamp& c : clamps) {
    INFO(c.what);
    CHECK(KvBlocksForMemory(c.memory, c.bytes_per_token, c.block_size) == c.blocks);
  }
}

}  // namespace hearth::catalogue

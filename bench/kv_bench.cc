// KV-cache primitives: block allocate + free, and prefix-cache lookup.
//
//   build/bench/hearth_kv_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//
// Targets: allocate + free <= 50 ns amortised per block; lookup <= 100 ns
// per block (including hashing the block's tokens is reported separately).

#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "kv/block_allocator.h"
#include "kv/prefix_cache.h"

namespace hearth::bench {
namespace {

void BM_AllocateFree(benchmark::State& state) {
  const auto batch = static_cast<int32_t>(state.range(0));
  auto alloc = *BlockAllocator::Create({.num_device_blocks = 1 << 16});
  std::vector<BlockId> held(static_cast<size_t>(batch));
  for (auto _ : state) {
    for (int32_t i = 0; i < batch; ++i) held[static_cast<size_t>(i)] = *alloc.Allocate();
    for (int32_t i = batch; i-- > 0;) (void)alloc.Release(held[static_cast<size_t>(i)]);
    benchmark::DoNotOptimize(held.data());
  }
  // One item = one block allocated and freed.
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_AllocateFree)->Arg(1)->Arg(16)->Arg(256);

// Allocation when every block is cached (each Allocate evicts the LRU head
// and tells the prefix cache).
void BM_AllocateEvicting(benchmark::State& state) {
  const int32_t n = 1 << 14;
  auto alloc = *BlockAllocator::Create({.num_device_blocks = n});
  PrefixCache cache(&alloc);
  uint64_t hash = 1;
  std::vector<BlockId> blocks(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    blocks[static_cast<size_t>(i)] = *alloc.Allocate();
    (void)cache.Insert(hash++, blocks[static_cast<size_t>(i)]);
  }
  for (BlockId b : blocks) (void)alloc.Release(b);
  for (auto _ : state) {
    BlockId b = *alloc.Allocate();
    (void)cache.Insert(hash++, b);
    (void)alloc.Release(b);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AllocateEvicting);

void BM_PrefixLookup(benchmark::State& state) {
  const int32_t n = static_cast<int32_t>(state.range(0));
  auto alloc = *BlockAllocator::Create({.num_device_blocks = n});
  PrefixCache cache(&alloc);
  std::mt19937_64 rng(7);
  std::vector<uint64_t> present, queries;
  for (int32_t i = 0; i < n; ++i) {
    const uint64_t h = rng();
    present.push_back(h);
    (void)cache.Insert(h, *alloc.Allocate());
  }
  // Half hits, half misses, in random order.
  for (int32_t i = 0; i < 4096; ++i) queries.push_back(i % 2 ? present[rng() % present.size()] : rng());
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cache.Find(queries[i++ & 4095]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PrefixLookup)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

void BM_HashBlock(benchmark::State& state) {
  std::vector<TokenId> tokens(static_cast<size_t>(state.range(0)));
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<TokenId>(i * 31);
  uint64_t h = PrefixCache::kRootHash;
  for (auto _ : state) {
    h = PrefixCache::HashBlock(h, tokens);
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HashBlock)->Arg(16);

}  // namespace
}  // namespace hearth::bench

BENCHMARK_MAIN();

// KvCacheManager on its own: what an admission takes (prefix hits, the last
// hit's copy-on-write, swap-ins, the rest of a prompt), growth that settles
// for less or takes nothing, drafts only beyond the watermark, and a class
// ledger that matches the block tables and reservations after every random
// operation.

#include "kv/kv_cache_manager.h"

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace hearth::internal {
namespace {

constexpr int32_t kBlockSize = 4;
constexpr int32_t kDeviceBlocks = 40;

WorkClassConfig Class(int32_t budget, bool borrow) {
  WorkClassConfig c;
  c.name = "c";
  c.kv_block_budget = budget;
  c.borrow = borrow;
  return c;
}

KvCacheManager MakeManager(const std::vector<WorkClassConfig>& classes, int32_t watermark = 0,
                           int32_t host_blocks = 16, double swap_block_cost_tokens = 1.0) {
  auto allocator = BlockAllocator::Create(
      {.num_device_blocks = kDeviceBlocks, .num_host_blocks = host_blocks});
  REQUIRE(allocator.ok());
  SchedulerOptions options;
  options.kv.num_device_blocks = kDeviceBlocks;
  options.kv.num_host_blocks = host_blocks;
  options.kv.block_size = kBlockSize;
  options.kv.watermark_blocks = watermark;
  options.kv.enable_prefix_caching = true;
  options.work_classes = classes;
  options.preemption_mode = PreemptionMode::kSwap;
  options.swap_block_cost_tokens = swap_block_cost_tokens;
  return KvCacheManager(std::move(*allocator), options);
}

std::vector<TokenId> Tokens(int32_t n, TokenId first = 0) {
  std::vector<TokenId> t;
  for (int32_t i = 0; i < n; ++i) t.push_back(first + i);
  return t;
}

void Open(KvCacheManager& kv, SequenceKv& seq, absl::Span<const TokenId> tokens) {
  std::vector<uint64_t> hashes;
  KvManager::ExtendHashChain(ChainScope{}, tokens, kBlockSize, tokens.size() / kBlockSize,
                             &hashes);
  kv.Open(seq, 64, /*has_token_ids=*/true, ChainScope{}, std::move(hashes));
}

AdmissionQuery Query(absl::Span<const TokenId> tokens, int32_t max_chunk, uint32_t cls = 0) {
  AdmissionQuery q;
  q.work_class = cls;
  q.length = static_cast<int32_t>(tokens.size());
  q.max_positions = q.length + 8;
  q.tokens = tokens;
  q.max_chunk = max_chunk;
  return q;
}

TEST_CASE("KvCacheManager: a cached prefix is reused, a whole cached prompt copies its last block",
          "[kv]") {
  KvCacheManager kv = MakeManager({Class(0, true)});
  StepPlan plan;
  const std::vector<TokenId> prompt = Tokens(12);
  SequenceKv first;
  Open(kv, first, prompt);
  AdmissionQuery q = Query(prompt, 64);
  KvAdmission a = kv.MeasureAdmission(first, q);
  CHECK(a.hits == 0);
  CHECK(a.start == 0);
  CHECK(a.total_blocks == 3);
  CHECK(a.new_blocks == 3);
  kv.Admit(first, RequestId(1), q, a, &plan);
  kv.RegisterFullBlocks(first, prompt, 12);
  kv.StopRunning(first, 0);
  kv.ReleaseTail(first, 0, 0);
  CHECK(kv.classes().held(0) == 0);

  // Its three blocks are cached: a longer prompt starts past them, and
  // taking them out of the LRU counts against the allocatable pool.
  const std::vector<TokenId> longer = Tokens(18);
  SequenceKv second;
  Open(kv, second, longer);
  q = Query(longer, 64);
  a = kv.MeasureAdmission(second, q);
  CHECK(a.hits == 3);
  CHECK(a.start == 12);
  CHECK(a.total_blocks == 5);
  CHECK(a.new_blocks == 2 + 3);
  kv.Admit(second, RequestId(2), q, a, &plan);

  // The same prompt again, while the longer one holds its blocks: its last
  // position must run, in a private copy of the shared last block.
  SequenceKv third;
  Open(kv, third, prompt);
  q = Query(prompt, 64);
  a = kv.MeasureAdmission(third, q);
  CHECK(a.copy_last_hit);
  CHECK(a.start == 11);
  CHECK(a.chunk == 1);
  CHECK(a.total_blocks == 3);
  CHECK(a.new_blocks == 1);
  kv.Admit(third, RequestId(3), q, a, &plan);
  CHECK(plan.copy_on_write.size() == 1);
  CHECK(third.num_blocks() == 3);
  CHECK(kv.classes().held(0) == 5 + 3);
}

TEST_CASE("KvCacheManager: the rest of a prompt is reserved and claimed with the first chunk",
          "[kv]") {
  KvCacheManager kv = MakeManager({Class(0, true)});
  StepPlan plan;
  const std::vector<TokenId> prompt = Tokens(40);
  SequenceKv seq;
  Open(kv, seq, prompt);
  const AdmissionQuery q = Query(prompt, /*max_chunk=*/8);
  const KvAdmission a = kv.MeasureAdmission(seq, q);
  CHECK(a.chunk == 8);
  CHECK(a.total_blocks == 2);
  CHECK(a.rest_of_prefill == 8);
  CHECK(a.blocks_claimed() == 10);
  kv.Admit(seq, RequestId(1), q, a, &plan);
  CHECK(kv.prefill_reserved() == 8);
  // Growth takes from the reservation; the prompt's end gives back the rest.
  CHECK(kv.Grow(seq, 0, 24, 24, kDeviceBlocks) == 24);
  CHECK(kv.prefill_reserved() == 4);
  kv.FinishPrefill(seq);
  CHECK(kv.prefill_reserved() == 0);
}

TEST_CASE("KvCacheManager: a swapped sequence comes back with its host copies", "[kv]") {
  KvCacheManager kv = MakeManager({Class(0, true)});
  StepPlan plan;
  const std::vector<TokenId> prompt = Tokens(10);
  SequenceKv seq;
  Open(kv, seq, prompt);
  AdmissionQuery q = Query(prompt, 64);
  kv.Admit(seq, RequestId(1), q, kv.MeasureAdmission(seq, q), &plan);
  kv.StopRunning(seq, 0);
  // Ten positions of KV in three blocks: copying them costs less than
  // recomputing the positions.
  REQUIRE(kv.SwapsOut(seq, 10));
  CHECK(kv.Preempt(seq, 0, RequestId(1), 10, &plan) == PreemptionMode::kSwap);
  CHECK(plan.swap_out.size() == 3);
  kv.ReleaseTail(seq, 0, 0);
  CHECK(seq.host.size() == 3);
  q.swapped = true;
  q.computed = 10;
  q.has_output = true;
  q.length = 11;
  const KvAdmission a = kv.MeasureAdmission(seq, q);
  CHECK(a.start == 10);
  CHECK(a.chunk == 1);
  CHECK(a.total_blocks == 3);
  CHECK(a.new_blocks == 3);
  CHECK(a.rest_of_prefill == 0);
  kv.Admit(seq, RequestId(1), q, a, &plan);
  CHECK(plan.swap_in.size() == 3);
  CHECK(kv.classes().held(0) == 3);
  // Back as a decode: nothing reserved for a prompt.
  CHECK(kv.prefill_reserved() == 0);
}

TEST_CASE("KvCacheManager: preemption swaps out only when the copies cost less than recompute",
          "[kv]") {
  // A block's round trip priced at 3 positions' recompute; 4 host blocks.
  KvCacheManager kv = MakeManager({Class(0, true)}, 0, /*host_blocks=*/4,
                                  /*swap_block_cost_tokens=*/3.0);
  SequenceKv seq;
  kv.Open(seq, 64, false, ChainScope{}, {});
  CHECK_FALSE(kv.SwapsOut(seq, 0));
  CHECK_FALSE(kv.SwapsOut(seq, 5));  // 2 blocks x 3 > 5 positions
  CHECK(kv.SwapsOut(seq, 6));
  CHECK(kv.SwapsOut(seq, 16));
  CHECK_FALSE(kv.SwapsOut(seq, 17));  // 5 blocks, but 4 host blocks
  // Only the computed blocks travel; the tail past them is released.
  REQUIRE(kv.Grow(seq, 0, 24, 24, kDeviceBlocks) == 24);
  StepPlan plan;
  CHECK(kv.Preempt(seq, 0, RequestId(1), 9, &plan) == PreemptionMode::kSwap);
  CHECK(seq.num_blocks() == 3);
  CHECK(plan.swap_out.size() == 3);
  CHECK(kv.classes().held(0) == 3);
  kv.ReleaseTail(seq, 0, 0);
  SequenceKv other;
  kv.Open(other, 64, false, ChainScope{}, {});
  REQUIRE(kv.Grow(other, 0, 24, 24, kDeviceBlocks) == 24);
  CHECK(kv.Preempt(other, 0, RequestId(2), 2, &plan) == PreemptionMode::kRecompute);
  CHECK(other.num_blocks() == 1);
  CHECK(other.host.empty());
  // A mean-pooled embedding keeps no progress across a preemption: the
  // engine's running sum goes with its state, so it is recomputed however
  // cheap the copies would be.
  SequenceKv embedding;
  ChainScope every_position;
  every_position.computes_every_position = true;
  kv.Open(embedding, 64, false, every_position, {});
  REQUIRE(kv.Grow(embedding, 0, 24, 24, kDeviceBlocks) == 24);
  // One block of three positions would swap for any other sequence (the
  // host tier has one block left).
  REQUIRE(kv.SwapsOut(other, 3));
  CHECK_FALSE(kv.SwapsOut(embedding, 3));
  CHECK(kv.Preempt(embedding, 0, RequestId(3), 3, &plan) == PreemptionMode::kRecompute);
  CHECK(embedding.host.empty());
}

TEST_CASE("KvCacheManager: growth settles for the minimum or takes nothing", "[kv]") {
  KvCacheManager kv = MakeManager({Class(0, true)}, /*watermark=*/4);
  SequenceKv a, b;
  kv.Open(a, 400, false, ChainScope{}, {});
  kv.Open(b, 400, false, ChainScope{}, {});
  CHECK(kv.Grow(a, 0, 36 * kBlockSize, 1, kDeviceBlocks) == 36 * kBlockSize);
  // Four blocks left: `want` is cut to them.
  CHECK(kv.Grow(b, 0, 10 * kBlockSize, 2 * kBlockSize, kDeviceBlocks) == 4 * kBlockSize);
  // None left: not even the minimum, and nothing is taken.
  CHECK(kv.Grow(b, 0, 6 * kBlockSize, 5 * kBlockSize, kDeviceBlocks) == -1);
  CHECK(b.num_blocks() == 4);
  CHECK(kv.classes().held(0) == 40);
  // Drafts never take the watermark's blocks.
  kv.ReleaseTail(a, 0, 30);
  CHECK(kv.GrowForDrafts(b, 0, 20 * kBlockSize, kDeviceBlocks, true) == 2);
  CHECK(kv.GrowForDrafts(b, 0, 20 * kBlockSize, kDeviceBlocks, true) == 0);
  kv.ReleaseTail(a, 0, 20);
  CHECK(kv.GrowForDrafts(b, 0, 20 * kBlockSize, kDeviceBlocks, false) == 0);
}

TEST_CASE("KvCacheManager: a hard budget caps growth and is reserved per running sequence",
          "[kv]") {
  KvCacheManager kv = MakeManager({Class(0, true), Class(10, false)});
  StepPlan plan;
  const std::vector<TokenId> prompt = Tokens(8);
  SequenceKv seq;
  Open(kv, seq, prompt);
  AdmissionQuery q = Query(prompt, 64, /*cls=*/1);
  q.max_positions = 24;
  const KvAdmission a = kv.MeasureAdmission(seq, q);
  CHECK(a.class_reservation == 6);
  kv.Admit(seq, RequestId(1), q, a, &plan);
  CHECK(kv.classes().reserved(1) == 6);
  CHECK(kv.CapToHardBudget(seq, 1, 100 * kBlockSize, 9 * kBlockSize) == 10 * kBlockSize);
  CHECK(kv.CapToHardBudget(seq, 1, 100 * kBlockSize, 11 * kBlockSize) == -1);
  // Moved to the unbudgeted class while running: blocks and reservation go.
  kv.MoveClass(seq, 1, 0, /*running=*/true, 6);
  CHECK(kv.classes().held(1) == 0);
  CHECK(kv.classes().held(0) == 2);
  CHECK(kv.classes().reserved(1) == 0);
  CHECK(seq.class_reserve == 0);
  kv.MoveClass(seq, 0, 1, /*running=*/true, 6);
  CHECK(kv.classes().reserved(1) == 6);
  kv.StopRunning(seq, 1);
  CHECK(kv.classes().reserved(1) == 0);
}

TEST_CASE("KvCacheManager: the class ledger matches the tables under random traffic", "[kv]") {
  const uint32_t seed = GENERATE(1u, 2u, 3u, 4u);
  CAPTURE(seed);
  std::mt19937 rng(seed);
  const std::vector<WorkClassConfig> classes = {Class(0, true), Class(24, false), Class(12, true)};
  KvCacheManager kv = MakeManager(classes, /*watermark=*/2);
  constexpr int kSequences = 6;
  std::vector<SequenceKv> seqs(kSequences);
  std::vector<uint32_t> cls(kSequences, 0);
  std::vector<bool> running(kSequences, false);
  std::vector<std::vector<TokenId>> prompts(kSequences);
  StepPlan plan;
  for (int op = 0; op < 3000; ++op) {
    const auto i = static_cast<size_t>(rng() % kSequences);
    SequenceKv& s = seqs[i];
    switch (rng() % 5) {
      case 0:
        if (running[i]) break;
        kv.ReleaseTail(s, cls[i], 0);
        cls[i] = static_cast<uint32_t>(rng() % classes.size());
        prompts[i] = Tokens(1 + static_cast<int32_t>(rng() % 30),
                            static_cast<TokenId>(100 * (rng() % 2)));
        Open(kv, s, prompts[i]);
        {
          const AdmissionQuery q = Query(prompts[i], 1 + static_cast<int32_t>(rng() % 16), cls[i]);
          const KvAdmission a = kv.MeasureAdmission(s, q);
          if (a.class_reservation < 0 ||
              kv.Allocatable(kDeviceBlocks) < a.blocks_claimed() + kv.prefill_reserved()) {
            break;
          }
          kv.Admit(s, RequestId(static_cast<uint64_t>(op + 1)), q, a, &plan);
          running[i] = true;
        }
        break;
      case 1:
        if (running[i]) {
          const int32_t want = s.num_blocks() * kBlockSize + 1 + static_cast<int32_t>(rng() % 9);
          (void)kv.Grow(s, cls[i], want, want, kDeviceBlocks);
        }
        break;
      case 2:
        if (running[i]) {
          kv.RegisterFullBlocks(s, prompts[i],
                                std::min<int32_t>(s.num_blocks() * kBlockSize,
                                                  static_cast<int32_t>(prompts[i].size())));
          kv.StopRunning(s, cls[i]);
          kv.ReleaseTail(s, cls[i], 0);
          running[i] = false;
        }
        break;
      case 3: {
        const auto to = static_cast<uint32_t>(rng() % classes.size());
        // The scheduler preempts a sequence the new class cannot reserve for.
        if (running[i] && kv.classes().ReservationFor(to, 8) < 0) break;
        kv.MoveClass(s, cls[i], to, running[i], 8);
        cls[i] = to;
        break;
      }
      default:
        if (running[i]) kv.ReleaseTail(s, cls[i], static_cast<size_t>(rng() % 4));
        break;
    }
    std::vector<int32_t> held(classes.size(), 0), reserved(classes.size(), 0);
    int32_t prefill = 0;
    for (size_t k = 0; k < seqs.size(); ++k) {
      held[cls[k]] += seqs[k].num_blocks();
      reserved[cls[k]] += seqs[k].class_reserve;
      prefill += seqs[k].prefill_reserve;
      if (!running[k]) REQUIRE(seqs[k].class_reserve == 0);
    }
    for (uint32_t c = 0; c < classes.size(); ++c) {
      REQUIRE(kv.classes().held(c) == held[c]);
      REQUIRE(kv.classes().reserved(c) == reserved[c]);
    }
    REQUIRE(kv.prefill_reserved() == prefill);
  }
}

}  // namespace
}  // namespace hearth::internal

// The CPU reference executor on hand-built plans: it computes the model an
// unpaged implementation computes, reads K/V only through block tables,
// applies swap and copy-on-write copies, and rejects malformed plans.

#include "hearth/exec/cpu_reference_executor.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <vector>

#include "dense_reference.h"
#include "plan_builder.h"

namespace hearth {
namespace {

using testing::Blocks;
using testing::PlanBuilder;

std::vector<TokenId> Prompt(int32_t n, int32_t salt) {
  std::vector<TokenId> p(n);
  for (int32_t i = 0; i < n; ++i) p[i] = (i * 37 + salt * 101 + 11) % 256;
  return p;
}

std::unique_ptr<CpuReferenceExecutor> MakeExecutor(int32_t device_blocks = 16,
                                                   int32_t host_blocks = 4) {
  CpuReferenceExecutorOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = device_blocks;
  o.kv.num_host_blocks = host_blocks;
  o.kv.max_positions = 512;
  auto e = CpuReferenceExecutor::Create(o);
  REQUIRE(e.ok());
  return *std::move(e);
}

// Prefills `prompt` in one step on `table`, then decodes `n` tokens; returns
// the sampled tokens. Step numbers start at `step`.
std::vector<TokenId> Generate(CpuReferenceExecutor& e, RequestId id,
                              const std::vector<TokenId>& prompt,
                              std::vector<BlockId> table, int32_t n,
                              uint64_t step = 1) {
  std::vector<TokenId> out;
  StepOutcome outcome;
  PlanBuilder first(step);
  first.Add(id, 0, prompt, table, /*full=*/true, /*sample=*/true);
  REQUIRE(e.Execute(first.plan(), &outcome).ok());
  REQUIRE(outcome.sequences.size() == 1);
  REQUIRE(outcome.sequences[0].error.empty());
  out.push_back(outcome.sequences[0].token);
  for (int32_t i = 1; i < n; ++i) {
    PlanBuilder b(step + i);
    const int32_t pos = static_cast<int32_t>(prompt.size()) + i - 1;
    b.Add(id, pos, {out.back()}, table, false, true);
    REQUIRE(e.Execute(b.plan(), &outcome).ok());
    REQUIRE(outcome.sequences[0].error.empty());
    out.push_back(outcome.sequences[0].token);
  }
  return out;
}

TEST_CASE("Create validates the model and the pools", "[exec]") {
  CpuReferenceExecutorOptions o;
  o.model.num_kv_heads = 3;
  CHECK(CpuReferenceExecutor::Create(o).status().code() ==
        absl::StatusCode::kInvalidArgument);
  o = {};
  o.model.dtype = DType::kBFloat16;
  CHECK(absl::IsInvalidArgument(CpuReferenceExecutor::Create(o).status()));
  o = {};
  o.kv.block_size = 0;
  CHECK(absl::IsInvalidArgument(CpuReferenceExecutor::Create(o).status()));
  o = {};
  o.stop_token = 256;
  CHECK(absl::IsInvalidArgument(CpuReferenceExecutor::Create(o).status()));
  o = {};
  CHECK(CpuReferenceExecutor::Create(o).ok());
}

TEST_CASE("Paged prefill and decode compute what an unpaged model computes",
          "[exec]") {
  auto e = MakeExecutor();
  const std::vector<TokenId> prompt = Prompt(21, 1);
  const std::vector<TokenId> got =
      Generate(*e, RequestId(1), prompt, Blocks({3, 9}), 8);
  const testing::DenseResult want = testing::DenseGreedy(e->options().model, prompt, 8);
  CHECK(got == want.tokens);
  // The logits of the last step match too, not just their argmax.
  const std::vector<float>& logits = e->last_logits();
  REQUIRE(logits.size() == want.logits.back().size());
  for (size_t i = 0; i < logits.size(); ++i) {
    CHECK(logits[i] == Approx(want.logits.back()[i]).margin(1e-5));
  }
  // The model is not degenerate: it does not emit one token over and over.
  CHECK(std::count(got.begin(), got.end(), got[0]) < 8);
}

TEST_CASE("Where blocks live in the pool does not change results", "[exec]") {
  const std::vector<TokenId> prompt = Prompt(40, 2);
  auto a = MakeExecutor();
  auto b = MakeExecutor();
  CHECK(Generate(*a, RequestId(1), prompt, Blocks({0, 1, 2, 3}), 10) ==
        Generate(*b, RequestId(7), prompt, Blocks({15, 4, 11, 8}), 10));
}

TEST_CASE("Chunked prefill equals one-shot prefill", "[exec]") {
  const std::vector<TokenId> prompt = Prompt(37, 3);
  auto whole = MakeExecutor();
  const auto want = Generate(*whole, RequestId(1), prompt, Blocks({0, 1, 2}), 3);

  auto e = MakeExecutor();
  StepOutcome outcome;
  const auto table = Blocks({5, 6, 7});
  int32_t pos = 0;
  uint64_t step = 1;
  // Chunks of 5, 16 and 16 tokens, the first with only one block allocated.
  for (int32_t chunk : {5, 16, 16}) {
    PlanBuilder b(step++);
    std::vector<TokenId> part(prompt.begin() + pos, prompt.begin() + pos + chunk);
    const bool last = pos + chunk == 37;
    if (pos == 0) {
      b.Add(RequestId(1), 0, part, Blocks({5}), true, false);
    } else if (pos == 5) {
      b.Add(RequestId(1), pos, part, Blocks({5, 6}), false, false, Blocks({6}));
    } else {
      b.Add(RequestId(1), pos, part, table, false, last, Blocks({7}));
    }
    REQUIRE(e->Execute(b.plan(), &outcome).ok());
    REQUIRE(outcome.sequences[0].error.empty());
    CHECK(outcome.sequences[0].produced_token == last);
    pos += chunk;
  }
  CHECK(outcome.sequences[0].token == want[0]);
}

TEST_CASE("Swap out, reuse of the blocks, swap in: progress is kept",
          "[exec]") {
  const std::vector<TokenId> prompt = Prompt(20, 4);
  auto ref = MakeExecutor();
  const auto want = Generate(*ref, RequestId(1), prompt, Blocks({0, 1}), 6);

  auto e = MakeExecutor();
  const auto first = Generate(*e, RequestId(1), prompt, Blocks({0, 1}), 3);
  StepOutcome outcome;
  // Swap request 1 out to host blocks {2, 3} while another request takes its
  // device blocks over in the same step.
  PlanBuilder out(10);
  out.plan().preempted.push_back({RequestId(1), 0, PreemptionMode::kSwap});
  out.plan().swap_out = {{RequestId(1), BlockId(0), BlockId(2)},
                         {RequestId(1), BlockId(1), BlockId(3)}};
  out.Add(RequestId(2), 0, Prompt(32, 5), Blocks({1, 0}), true, true);
  REQUIRE(e->Execute(out.plan(), &outcome).ok());
  REQUIRE(outcome.sequences[0].error.empty());
  CHECK(e->num_live_sequences() == 1);
  // Swap back in to other device blocks and continue decoding.
  std::vector<TokenId> got = first;
  PlanBuilder in(11);
  in.plan().released.push_back({RequestId(2)});
  in.plan().swap_in = {{RequestId(1), BlockId(2), BlockId(7)},
                       {RequestId(1), BlockId(3), BlockId(4)}};
  in.Add(RequestId(1), 22, {got.back()}, Blocks({7, 4}), true, true);
  REQUIRE(e->Execute(in.plan(), &outcome).ok());
  REQUIRE(outcome.sequences[0].error.empty());
  got.push_back(outcome.sequences[0].token);
  for (uint64_t step = 12; got.size() < 6; ++step) {
    PlanBuilder b(step);
    b.Add(RequestId(1), 20 + static_cast<int32_t>(got.size()) - 1, {got.back()},
          Blocks({7, 4}), false, true);
    REQUIRE(e->Execute(b.plan(), &outcome).ok());
    got.push_back(outcome.sequences[0].token);
  }
  CHECK(got == want);
  CHECK(e->num_live_sequences() == 1);
}

TEST_CASE("Copy-on-write forks a shared partial block", "[exec]") {
  // Request 2 shares request 1's 20-token prompt (blocks 0 and 1) and then
  // diverges: block 1 is only partly full, so it is copied to block 5 first.
  const std::vector<TokenId> shared = Prompt(20, 6);
  std::vector<TokenId> own = shared;
  own.insert(own.end(), {9, 8, 7});
  auto ref = MakeExecutor();
  const auto want = Generate(*ref, RequestId(9), own, Blocks({2, 3}), 4);

  auto e = MakeExecutor();
  StepOutcome outcome;
  PlanBuilder a(1);
  a.Add(RequestId(1), 0, shared, Blocks({0, 1}), true, true);
  REQUIRE(e->Execute(a.plan(), &outcome).ok());
  PlanBuilder b(2);
  b.plan().copy_on_write = {{RequestId(2), BlockId(1), BlockId(5)}};
  b.Add(RequestId(2), 20, {9, 8, 7}, Blocks({0, 5}), true, true);
  // Request 1 keeps decoding into its own block 1 in the same step.
  b.Add(RequestId(1), 20, {outcome.sequences[0].token}, Blocks({0, 1}), false,
        true);
  REQUIRE(e->Execute(b.plan(), &outcome).ok());
  REQUIRE(outcome.sequences[0].error.empty());
  REQUIRE(outcome.sequences[1].error.empty());
  CHECK(outcome.sequences[0].token == want[0]);
}

TEST_CASE("Malformed copies fail the whole step and change nothing",
          "[exec]") {
  auto e = MakeExecutor(/*device_blocks=*/8, /*host_blocks=*/2);
  StepOutcome outcome;
  PlanBuilder a(1);
  a.Add(RequestId(1), 0, Prompt(10, 7), Blocks({0}), true, true);
  REQUIRE(e->Execute(a.plan(), &outcome).ok());

  for (int which = 0; which < 4; ++which) {
    PlanBuilder b(2);
    if (which == 0) b.plan().swap_out = {{RequestId(1), BlockId(0), BlockId(2)}};
    if (which == 1) b.plan().swap_in = {{RequestId(1), BlockId(5), BlockId(0)}};
    if (which == 2) b.plan().copy_on_write = {{RequestId(1), BlockId(0), BlockId(8)}};
    if (which == 3) {
      b.plan().copy_on_write = {{RequestId(1), BlockId(0), BlockId(3)},
                                {RequestId(1), BlockId(1), BlockId(3)}};
    }
    b.plan().preempted.push_back({RequestId(1), 0, PreemptionMode::kRecompute});
    const absl::Status s = e->Execute(b.plan(), &outcome);
    INFO(s.message());
    CHECK(absl::IsInvalidArgument(s));
    // The preemption was not applied either.
    CHECK(e->num_live_sequences() == 1);
  }
}

TEST_CASE("Malformed sequences fail alone", "[exec]") {
  auto e = MakeExecutor(/*device_blocks=*/8);
  StepOutcome outcome;
  PlanBuilder a(1);
  a.Add(RequestId(1), 0, Prompt(10, 8), Blocks({0}), true, true);
  a.Add(RequestId(2), 0, Prompt(10, 9), Blocks({1}), true, true);
  REQUIRE(e->Execute(a.plan(), &outcome).ok());

  PlanBuilder b(2);
  b.Add(RequestId(1), 10, {1, 2, 3, 4, 5, 6, 7}, Blocks({0}), false, true);  // table too short
  b.Add(RequestId(2), 11, {1}, Blocks({1}), false, true);   // skips position 10
  b.Add(RequestId(3), 0, {1, 2}, Blocks({2}), false, true); // unknown, not full
  b.Add(RequestId(4), 0, {1, 999}, Blocks({3}), true, true);     // token id
  b.Add(RequestId(5), 0, {1, 2}, Blocks({12}), true, true);      // block id
  b.Add(RequestId(6), 0, {1, 2}, Blocks({4}), true, true);       // fine
  b.Add(RequestId(7), 0, {1, 2}, Blocks({4}), true, true);       // writes into 6's block
  REQUIRE(e->Execute(b.plan(), &outcome).ok());
  REQUIRE(outcome.sequences.size() == 7);
  for (int i : {0, 1, 2, 3, 4}) {
    INFO(i);
    CHECK_FALSE(outcome.sequences[i].error.empty());
    CHECK_FALSE(outcome.sequences[i].produced_token);
  }
  // 6 and 7 both hold block 4 and write into it: a missed copy-on-write.
  CHECK_FALSE(outcome.sequences[5].error.empty());
  CHECK_FALSE(outcome.sequences[6].error.empty());
  // Failed sequences are forgotten.
  CHECK(e->num_live_sequences() == 0);

  // A sequence without token ids (request submitted without them) fails too.
  PlanBuilder c(3);
  c.Add(RequestId(8), 0, {1, 2}, Blocks({0}), true, true);
  c.plan().sequences[0].token_ids = {};
  REQUIRE(e->Execute(c.plan(), &outcome).ok());
  CHECK_THAT(outcome.sequences[0].error, Catch::Contains("prompt_token_ids"));
}

TEST_CASE("Preempted and released requests are forgotten", "[exec]") {
  auto e = MakeExecutor();
  StepOutcome outcome;
  PlanBuilder a(1);
  a.Add(RequestId(1), 0, Prompt(5, 1), Blocks({0}), true, true);
  a.Add(RequestId(2), 0, Prompt(5, 2), Blocks({1}), true, true);
  REQUIRE(e->Execute(a.plan(), &outcome).ok());
  CHECK(e->num_live_sequences() == 2);
  PlanBuilder b(2);
  b.plan().preempted.push_back({RequestId(1), 0, PreemptionMode::kRecompute});
  b.plan().released.push_back({RequestId(2)});
  REQUIRE(e->Execute(b.plan(), &outcome).ok());
  CHECK(outcome.sequences.empty());
  CHECK(e->num_live_sequences() == 0);
  PlanBuilder c(3);
  c.Add(RequestId(1), 5, {1}, Blocks({0}), false, true);
  REQUIRE(e->Execute(c.plan(), &outcome).ok());
  CHECK_THAT(outcome.sequences[0].error, Catch::Contains("holds no table"));
}

TEST_CASE("The stop token ends a request", "[exec]") {
  const std::vector<TokenId> prompt = Prompt(12, 10);
  auto probe = MakeExecutor();
  const auto tokens = Generate(*probe, RequestId(1), prompt, Blocks({0}), 1);
  CpuReferenceExecutorOptions o;
  o.kv.num_device_blocks = 4;
  o.stop_token = tokens[0];
  auto e = *CpuReferenceExecutor::Create(o);
  StepOutcome outcome;
  PlanBuilder a(1);
  a.Add(RequestId(1), 0, prompt, Blocks({0}), true, true);
  REQUIRE(e->Execute(a.plan(), &outcome).ok());
  CHECK(outcome.sequences[0].finish == FinishReason::kStopToken);
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

// Runs `prompt` as an embedding in chunks of `chunks` tokens on one table;
// returns the pooled vector (empty if the last step pooled none).
std::vector<float> Embed(CpuReferenceExecutor& e, RequestId id, const std::vector<TokenId>& prompt,
                         const std::vector<int32_t>& chunks, bool mean) {
  const auto table = testing::Blocks({5, 6, 7});
  StepOutcome outcome;
  int32_t pos = 0;
  uint64_t step = 1;
  for (int32_t chunk : chunks) {
    testing::PlanBuilder b(step++);
    std::vector<TokenId> part(prompt.begin() + pos, prompt.begin() + pos + chunk);
    b.Add(id, pos, part, table, /*full=*/pos == 0, /*sample=*/false, {});
    ScheduledSequence& s = b.plan().sequences.back();
    s.embed = true;
    s.mean_pool = mean;
    s.pool = pos + chunk == static_cast<int32_t>(prompt.size());
    REQUIRE(e.Execute(b.plan(), &outcome).ok());
    REQUIRE(outcome.sequences[0].error.empty());
    CHECK_FALSE(outcome.sequences[0].produced_token);
    pos += chunk;
  }
  CHECK(outcome.embedding_width == e.options().model.hidden_size);
  return outcome.embeddings;
}

TEST_CASE("Embeddings pool what an unpaged model computes, however chunked", "[exec][embed]") {
  const std::vector<TokenId> prompt = Prompt(37, 5);
  for (const bool mean : {false, true}) {
    INFO("mean " << mean);
    auto e = MakeExecutor();
    const std::vector<float> want = testing::DenseEmbedding(e->options().model, prompt, mean);
    const std::vector<float> whole = Embed(*e, RequestId(1), prompt, {37}, mean);
    REQUIRE(whole.size() == want.size());
    float norm = 0.0f;
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(whole[i] == Approx(want[i]).margin(1e-5));
      norm += whole[i] * whole[i];
    }
    CHECK(norm == Approx(1.0f).margin(1e-5));
    // Chunked, the float operations are the same ones in the same order.
    auto chunked = MakeExecutor();
    CHECK(Embed(*chunked, RequestId(2), prompt, {5, 16, 16}, mean) == whole);
    CHECK(e->num_live_sequences() == 1);
  }
  auto e = MakeExecutor();
  CHECK(Embed(*e, RequestId(1), prompt, {37}, true) != Embed(*e, RequestId(2), prompt, {37}, false));
}

TEST_CASE("A mean-pooled chunk that does not continue its sum fails alone", "[exec][embed]") {
  const std::vector<TokenId> prompt = Prompt(32, 6);
  auto e = MakeExecutor();
  StepOutcome outcome;
  testing::PlanBuilder first(1);
  first.Add(RequestId(1), 0, {prompt.begin(), prompt.begin() + 16}, testing::Blocks({0, 1}), true,
            false);
  first.plan().sequences[0].embed = first.plan().sequences[0].mean_pool = true;
  REQUIRE(e->Execute(first.plan(), &outcome).ok());
  REQUIRE(outcome.sequences[0].error.empty());
  // Preempted, the engine drops its sum: a chunk picking up at 16 has none.
  testing::PlanBuilder second(2);
  second.plan().preempted.push_back({RequestId(1), 0, PreemptionMode::kSwap});
  second.Add(RequestId(2), 0, {prompt.begin(), prompt.begin() + 4}, testing::Blocks({3}), true,
             true);
  REQUIRE(e->Execute(second.plan(), &outcome).ok());
  testing::PlanBuilder third(3);
  third.Add(RequestId(1), 16, {prompt.begin() + 16, prompt.end()}, testing::Blocks({0, 1}), true,
            false);
  ScheduledSequence& s = third.plan().sequences[0];
  s.embed = s.mean_pool = s.pool = true;
  third.Add(RequestId(2), 4, {prompt[4]}, testing::Blocks({3}), false, true);
  REQUIRE(e->Execute(third.plan(), &outcome).ok());
  CHECK_THAT(outcome.sequences[0].error, Catch::Contains("its sum covers [0, 0)"));
  CHECK(outcome.sequences[1].error.empty());
  CHECK(outcome.sequences[1].produced_token);
  CHECK(outcome.embeddings.empty());
}

}  // namespace
}  // namespace hearth

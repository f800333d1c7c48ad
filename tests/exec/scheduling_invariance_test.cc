// "Scheduling never changes results": one workload of requests with random
// prompts runs alone and under many schedules (batching, chunk sizes, prefix
// cache hits, preemption by recompute and by swap) on the CPU reference
// executor; every request must produce exactly the same tokens every time.
// The executor computes each position identically whatever it is batched
// with, so any difference is a wrong block table, position, token id or copy
// in the scheduler's plans.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "hearth/exec/cpu_reference_executor.h"
#include "scheduling_harness.h"

namespace hearth {
namespace {

using testing::RandomWorkload;
using testing::RunAlone;
using testing::RunWorkload;
using testing::WorkloadRequest;
using testing::WorkloadRun;
using testing::WorkloadShape;

SchedulerOptions BaseOptions() {
  SchedulerOptions o;
  o.models[0].context_length = 512;
  o.models[0].vocab_size = 256;
  o.users = {{"alice", 1.0}, {"bob", 2.0}, {"carol", 1.0}};
  o.work_classes = {{"chat", 0}, {"voice", 5}};
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 256;
  o.kv.enable_prefix_caching = false;
  // These tests exist to preempt, on caches of a few blocks: the growth
  // headroom would keep the running set small enough that nothing is.
  o.kv.growth_headroom_tokens = 0;
  o.max_batched_tokens = 256;
  o.max_running = 16;
  return o;
}

WorkloadShape Shape(uint64_t seed) {
  WorkloadShape s;
  s.requests = 12;
  s.num_users = 3;
  s.num_work_classes = 2;
  s.seed = seed;
  return s;
}

// Runs `workload` under `options` and checks every request finished with the
// tokens it produced alone.
WorkloadRun ExpectSameTokens(const SchedulerOptions& options,
                             const std::vector<WorkloadRequest>& workload,
                             const std::vector<std::vector<TokenId>>& alone,
                             const testing::ExecutorFactory& factory =
                                 testing::CpuExecutorFactory()) {
  absl::StatusOr<WorkloadRun> run = RunWorkload(options, workload, factory);
  INFO(run.status().ToString());
  REQUIRE(run.ok());
  for (size_t i = 0; i < workload.size(); ++i) {
    INFO(absl::StrFormat("request %d (prompt %d tokens, max_new %d)", i,
                         workload[i].prompt.size(), workload[i].max_new_tokens));
    CHECK(run->results[i].phase == RequestPhase::kFinished);
    CHECK(run->results[i].output_tokens == int32_t(run->tokens[i].size()));
    CHECK(run->tokens[i] == alone[i]);
  }
  return *std::move(run);
}

std::vector<std::vector<TokenId>> Alone(const std::vector<WorkloadRequest>& w) {
  auto alone = RunAlone(BaseOptions(), w, testing::CpuExecutorFactory());
  INFO(alone.status().ToString());
  REQUIRE(alone.ok());
  for (size_t i = 0; i < w.size(); ++i) {
    REQUIRE(int32_t((*alone)[i].size()) == w[i].max_new_tokens);
  }
  return *std::move(alone);
}

TEST_CASE("Batching and chunk sizes never change tokens", "[exec][invariance]") {
  const uint64_t seed = GENERATE(1, 2);
  const std::vector<WorkloadRequest> w = RandomWorkload(Shape(seed));
  const auto alone = Alone(w);
  struct Budget {
    int32_t batched, chunk;
  };
  for (Budget b : {Budget{2048, 0}, Budget{64, 0}, Budget{64, 7},
                   Budget{32, 16}, Budget{8, 1}, Budget{256, 33}}) {
    SchedulerOptions o = BaseOptions();
    o.max_batched_tokens = b.batched;
    o.max_running = std::min(16, b.batched);
    o.max_prefill_chunk_tokens = b.chunk;
    INFO(absl::StrFormat("max_batched_tokens %d, max_prefill_chunk_tokens %d",
                         b.batched, b.chunk));
    const WorkloadRun run = ExpectSameTokens(o, w, alone);
    CHECK(run.max_batch > 1);
    if (b.chunk != 0 || b.batched < 70) CHECK(run.chunked_prefill_steps > 0);
  }
}

TEST_CASE("Prefix-cache hits never change tokens", "[exec][invariance]") {
  WorkloadShape shape = Shape(3);
  shape.shared_prefix = 40;  // two full shared blocks and a partial one
  shape.max_prompt = 30;
  shape.arrival_spread = 40;
  const std::vector<WorkloadRequest> w = RandomWorkload(shape);
  const auto alone = Alone(w);
  for (int32_t chunk : {0, 16, 5}) {
    SchedulerOptions o = BaseOptions();
    o.kv.enable_prefix_caching = true;
    o.max_prefill_chunk_tokens = chunk;
    INFO("chunk " << chunk);
    const WorkloadRun run = ExpectSameTokens(o, w, alone);
    CHECK(run.stats.prefix_hit_tokens > 0);
  }
}

TEST_CASE("Preemption by recompute never changes tokens", "[exec][invariance]") {
  const std::vector<WorkloadRequest> w = RandomWorkload(Shape(4));
  const auto alone = Alone(w);
  for (int32_t blocks : {8, 14}) {
    SchedulerOptions o = BaseOptions();
    o.kv.num_device_blocks = blocks;
    o.max_prefill_chunk_tokens = 24;
    INFO("device blocks " << blocks);
    const WorkloadRun run = ExpectSameTokens(o, w, alone);
    CHECK(run.stats.preemptions > 0);
  }
}

TEST_CASE("Preemption by swap never changes tokens", "[exec][invariance]") {
  const std::vector<WorkloadRequest> w = RandomWorkload(Shape(5));
  const auto alone = Alone(w);
  for (int32_t host : {64, 8}) {
    SchedulerOptions o = BaseOptions();
    o.kv.num_device_blocks = 12;
    o.kv.num_host_blocks = host;
    o.preemption_mode = PreemptionMode::kSwap;
    INFO("host blocks " << host);
    const WorkloadRun run = ExpectSameTokens(o, w, alone);
    CHECK(run.swap_out_copies > 0);
    CHECK(run.swap_in_copies > 0);
  }
}

TEST_CASE("Holds and prefix-cache opt-outs never change tokens", "[exec][invariance]") {
  WorkloadShape shape = Shape(7);
  shape.shared_prefix = 40;
  shape.max_prompt = 30;
  const std::vector<WorkloadRequest> plain = RandomWorkload(shape);
  const auto alone = Alone(plain);
  // Every other request held for 1-6 steps; every third opts out of the
  // prefix cache (so its shared prefix is computed, not reused).
  std::vector<WorkloadRequest> w = plain;
  for (size_t i = 0; i < w.size(); ++i) {
    if (i % 2 == 0) w[i].hold_steps = 1 + static_cast<int32_t>(i % 6);
    w[i].cache_opt_out = i % 3 == 0;
  }
  for (const bool swap : {false, true}) {
    SchedulerOptions o = BaseOptions();
    o.kv.enable_prefix_caching = true;
    o.max_prefill_chunk_tokens = 16;
    if (swap) {
      o.kv.num_device_blocks = 14;
      o.kv.num_host_blocks = 64;
      o.preemption_mode = PreemptionMode::kSwap;
    }
    INFO("swap " << swap);
    const WorkloadRun run = ExpectSameTokens(o, w, alone);
    CHECK(run.stats.prefix_hit_tokens > 0);
    if (swap) CHECK(run.stats.preemptions > 0);
  }
}

TEST_CASE("Prefix hits, chunking and swap together never change tokens",
          "[exec][invariance]") {
  WorkloadShape shape = Shape(6);
  shape.requests = 16;
  shape.shared_prefix = 33;
  shape.max_prompt = 40;
  const std::vector<WorkloadRequest> w = RandomWorkload(shape);
  const auto alone = Alone(w);
  SchedulerOptions o = BaseOptions();
  o.kv.enable_prefix_caching = true;
  o.kv.num_device_blocks = 16;
  o.kv.num_host_blocks = 32;
  o.preemption_mode = PreemptionMode::kSwap;
  o.max_batched_tokens = 48;
  o.max_prefill_chunk_tokens = 20;
  const WorkloadRun run = ExpectSameTokens(o, w, alone);
  CHECK(run.stats.prefix_hit_tokens > 0);
  CHECK(run.stats.preemptions > 0);
}

TEST_CASE("Speculative decoding never changes tokens", "[exec][invariance]") {
  // Long outputs: the tiny model's greedy text repeats itself, which is what
  // the executor's n-gram drafter finds.
  WorkloadShape shape = Shape(7);
  shape.max_new_tokens = 60;
  const std::vector<WorkloadRequest> w = RandomWorkload(shape);
  std::vector<std::vector<TokenId>> alone;
  {
    auto a = RunAlone(BaseOptions(), w, testing::CpuExecutorFactory());
    REQUIRE(a.ok());
    alone = *std::move(a);
  }
  struct Config {
    int32_t drafts, batched, blocks;
  };
  // Plenty of room; a budget that leaves drafts little; a cache that
  // preempts mid-speculation.
  for (Config c : {Config{4, 256, 256}, Config{8, 256, 256}, Config{2, 24, 256},
                   Config{4, 64, 16}}) {
    SchedulerOptions o = BaseOptions();
    o.max_draft_tokens = c.drafts;
    o.max_batched_tokens = c.batched;
    o.max_running = std::min(16, c.batched);
    o.kv.num_device_blocks = c.blocks;
    INFO(absl::StrFormat("max_draft_tokens %d, max_batched_tokens %d, %d blocks", c.drafts,
                         c.batched, c.blocks));
    const WorkloadRun run = ExpectSameTokens(o, w, alone);
    CHECK(run.draft_tokens > 0);
    CHECK(run.accepted_drafts > 0);
    if (c.blocks < 100) CHECK(run.stats.preemptions > 0);
  }
}

TEST_CASE("Overlapped planning never changes tokens", "[exec][invariance][overlap]") {
  WorkloadShape shape = Shape(9);
  shape.max_new_tokens = 40;
  const std::vector<WorkloadRequest> w = RandomWorkload(shape);
  // A stop token the requests sample early (the first token of the request
  // with the longest output): requests then end by a stop the scheduler
  // cannot foresee, voiding the entry already planned after it.
  const std::vector<std::vector<TokenId>> plain = Alone(w);
  TokenId stop = -1;
  for (size_t i = 0; i < plain.size(); ++i) {
    if (plain[i].size() > 3 && (stop < 0 || plain[i].size() > plain[0].size())) {
      stop = plain[i][2];
    }
  }
  REQUIRE(stop >= 0);
  struct Config {
    const char* what;
    int32_t batched, chunk, blocks, host_blocks;
    bool prefix;
    PreemptionMode mode;
    int32_t drafts;
  };
  for (bool with_stop : {false, true}) {
    const testing::ExecutorFactory factory =
        testing::CpuExecutorFactory(with_stop ? stop : -1);
    auto alone_run = RunAlone(BaseOptions(), w, factory);
    REQUIRE(alone_run.ok());
    const std::vector<std::vector<TokenId>> alone = *std::move(alone_run);
    for (Config c : {Config{"roomy", 256, 0, 256, 0, false, PreemptionMode::kRecompute, 0},
                     Config{"chunked", 40, 12, 256, 0, false, PreemptionMode::kRecompute, 0},
                     Config{"prefix hits", 256, 16, 256, 0, true, PreemptionMode::kRecompute, 0},
                     Config{"recompute", 64, 16, 14, 0, false, PreemptionMode::kRecompute, 0},
                     Config{"swap", 64, 16, 14, 32, true, PreemptionMode::kSwap, 0},
                     Config{"speculative", 64, 0, 256, 0, false, PreemptionMode::kRecompute, 4}}) {
      SchedulerOptions o = BaseOptions();
      o.overlap_planning = true;
      o.max_batched_tokens = c.batched;
      o.max_prefill_chunk_tokens = c.chunk;
      o.max_running = std::min(16, c.batched);
      o.kv.num_device_blocks = c.blocks;
      o.kv.num_host_blocks = c.host_blocks;
      o.kv.enable_prefix_caching = c.prefix;
      o.preemption_mode = c.mode;
      o.max_draft_tokens = c.drafts;
      INFO(absl::StrFormat("%s, stop token %s", c.what, with_stop ? "on" : "off"));
      const WorkloadRun run = ExpectSameTokens(o, w, alone, factory);
      CHECK(run.pending_inputs > 0);
      if (c.blocks < 100) CHECK(run.stats.preemptions > 0);
      if (c.drafts > 0) CHECK(run.accepted_drafts > 0);
    }
  }
}

// Passes the plan on without its swap-ins: what an engine that ignored them
// would compute. The invariance check must notice.
class DropSwapIns : public StepExecutor {
 public:
  explicit DropSwapIns(std::unique_ptr<StepExecutor> inner)
      : inner_(std::move(inner)) {}
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override {
    StepPlan copy = plan;
    copy.swap_in.clear();
    return inner_->Execute(copy, outcome);
  }

 private:
  std::unique_ptr<StepExecutor> inner_;
};

TEST_CASE("The invariance check catches an engine that skips swap-ins",
          "[exec][invariance]") {
  const std::vector<WorkloadRequest> w = RandomWorkload(Shape(5));
  const auto alone = Alone(w);
  SchedulerOptions o = BaseOptions();
  o.kv.num_device_blocks = 12;
  o.kv.num_host_blocks = 64;
  o.preemption_mode = PreemptionMode::kSwap;
  auto broken = [](const SchedulerOptions& options)
      -> absl::StatusOr<std::unique_ptr<StepExecutor>> {
    auto inner = testing::CpuExecutorFactory()(options);
    if (!inner.ok()) return inner.status();
    return std::unique_ptr<StepExecutor>(new DropSwapIns(*std::move(inner)));
  };
  absl::StatusOr<WorkloadRun> run = RunWorkload(o, w, broken);
  REQUIRE(run.ok());
  REQUIRE(run->swap_in_copies > 0);
  size_t differing = 0;
  for (size_t i = 0; i < w.size(); ++i) differing += run->tokens[i] != alone[i];
  CHECK(differing > 0);
}

}  // namespace
}  // namespace hearth

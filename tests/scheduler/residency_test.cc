// Model residency: cold-model requests wait apart from runnable work, loads
// are bounded and issued as plan commands, idle models are evicted least
// recently used first or after their keep-alive, failed loads fail their
// requests with the reason, and KV is limited to what weights leave.

#include <string>

#include <catch2/catch.hpp>

#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

constexpr int64_t kKvPerToken = 1000;
constexpr int32_t kBlock = 16;
constexpr int64_t kBlockBytes = kKvPerToken * kBlock;

SchedulerOptions ThreeModels(int64_t memory_blocks, std::vector<int64_t> weight_blocks,
                             std::vector<bool> preload) {
  SchedulerOptions o;
  o.kv.block_size = kBlock;
  o.kv.num_device_blocks = 256;
  o.models.clear();
  for (size_t i = 0; i < weight_blocks.size(); ++i) {
    o.models.push_back({.name = "m" + std::to_string(i), .context_length = 4096,
                        .kv_bytes_per_token = kKvPerToken,
                        .weights_bytes = weight_blocks[i] * kBlockBytes, .preload = preload[i]});
  }
  o.residency.device_memory_bytes = memory_blocks * kBlockBytes;
  return o;
}

std::unique_ptr<SchedulerHarness> Harness(SchedulerOptions o) {
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return std::move(*h);
}

TEST_CASE("A cold model's request never delays a resident model's request", "[scheduler][residency]") {
  auto h = Harness(ThreeModels(200, {50, 60, 10}, {true, false, false}));
  RequestId cold = *h->Submit(Spec({.model = 1, .prompt = 32, .max_new = 8}));
  RequestId warm = *h->Submit(Spec({.model = 0, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  // The warm request runs at once; the cold one waits for its load.
  CHECK(h->last_plan().Find(warm) != nullptr);
  CHECK(h->last_plan().Find(cold) == nullptr);
  CHECK(h->last_plan().model_commands_loads == 1);
  REQUIRE(h->Step().ok());
  CHECK(h->last_plan().Find(cold) != nullptr);  // Loaded in the previous step.
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(warm).first_admit_time == h->results().at(warm).arrival_time);
  CHECK(h->results().at(cold).phase == RequestPhase::kFinished);
}

TEST_CASE("Loads are plan commands, never more than the bound per step", "[scheduler][residency]") {
  SchedulerOptions o = ThreeModels(400, {50, 60, 70}, {false, false, false});
  o.residency.max_concurrent_loads = 1;
  auto h = SchedulerHarness::Create(o);
  REQUIRE(h.ok());
  for (uint32_t m = 0; m < 3; ++m) {
    REQUIRE((*h)->Submit(Spec({.model = m, .prompt = 32, .max_new = 8})).ok());
  }
  // PlanChecker (inside Step) fails the step if a plan loads more than one.
  int steps_with_loads = 0;
  for (int i = 0; i < 4; ++i) {
    REQUIRE((*h)->Step().ok());
    const int loads = (*h)->last_plan().model_commands_loads;
    CHECK(loads <= 1);
    steps_with_loads += loads;
  }
  CHECK(steps_with_loads == 3);
}

TEST_CASE("Idle models are evicted least recently used first", "[scheduler][residency]") {
  // Room for two of the three models' weights plus KV.
  auto h = Harness(ThreeModels(160, {60, 60, 60}, {true, true, false}));
  RequestId a = *h->Submit(Spec({.model = 0, .prompt = 32, .max_new = 8}));
  REQUIRE(h->RunUntilIdle().ok());
  h->Advance(absl::Seconds(1));
  RequestId b = *h->Submit(Spec({.model = 1, .prompt = 32, .max_new = 8}));
  REQUIRE(h->RunUntilIdle().ok());
  // m0 was used longest ago: the load of m2 unloads it, not m1.
  RequestId c = *h->Submit(Spec({.model = 2, .prompt = 32, .max_new = 8}));
  h->keep_history(true);
  REQUIRE(h->RunUntilIdle().ok());
  int unloads_of_m0 = 0, unloads_of_m1 = 0;
  for (const auto& p : h->history()) {
    unloads_of_m0 += p.unloads_of[0];
    unloads_of_m1 += p.unloads_of[1];
  }
  CHECK(unloads_of_m0 == 1);
  CHECK(unloads_of_m1 == 0);
  (void)a;
  (void)b;
  CHECK(h->results().at(c).phase == RequestPhase::kFinished);
  // Inspect residency through a fresh request: m1 still resident (no wait).
  RequestId again = *h->Submit(Spec({.model = 1, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  CHECK(h->last_plan().Find(again) != nullptr);
  RequestId back = *h->Submit(Spec({.model = 0, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  CHECK(h->last_plan().Find(back) == nullptr);  // m0 was unloaded: it loads first.
  CHECK(h->last_plan().model_commands_loads == 1);
  REQUIRE(h->RunUntilIdle().ok());
}

TEST_CASE("Keep-alive unloads an idle model", "[scheduler][residency]") {
  SchedulerOptions o = ThreeModels(400, {50, 60}, {true, true});
  o.models[1].keep_alive = absl::Milliseconds(50);
  auto h = Harness(o);
  REQUIRE(h->Submit(Spec({.model = 1, .prompt = 32, .max_new = 8})).ok());
  REQUIRE(h->RunUntilIdle().ok());
  for (int i = 0; i < 10; ++i) REQUIRE(h->Step().ok());  // 100 ms idle.
  RequestId later = *h->Submit(Spec({.model = 1, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  CHECK(h->last_plan().Find(later) == nullptr);
  CHECK(h->last_plan().model_commands_loads == 1);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(later).phase == RequestPhase::kFinished);
}

TEST_CASE("A failed load fails the requests waiting for it, with the reason", "[scheduler][residency]") {
  auto h = Harness(ThreeModels(400, {50, 60}, {true, false}));
  h->executor().set_load_failure_rate(1.0);
  RequestId a = *h->Submit(Spec({.model = 1, .prompt = 32, .max_new = 8}));
  RequestId b = *h->Submit(Spec({.model = 1, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  for (RequestId id : {a, b}) {
    CHECK(h->results().at(id).phase == RequestPhase::kFailed);
    CHECK(h->results().at(id).message.find("failed to load") != std::string::npos);
  }
  h->executor().set_load_failure_rate(0.0);
  RequestId c = *h->Submit(Spec({.model = 1, .prompt = 32, .max_new = 8}));
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(c).phase == RequestPhase::kFinished);
}

TEST_CASE("Residency options and requests are validated", "[scheduler][residency]") {
  SchedulerOptions o = ThreeModels(100, {50, 60}, {true, true});
  CHECK(std::string(Scheduler::Create(o).status().message()).find("preload") != std::string::npos);
  o = ThreeModels(100, {50, 60}, {true, false});
  o.models[0].kv_bytes_per_token = 0;
  CHECK(std::string(Scheduler::Create(o).status().message()).find("kv_bytes_per_token") != std::string::npos);
  o = ThreeModels(100, {50, 60}, {true, false});
  auto s = *Scheduler::Create(o);
  // m1 leaves 40 blocks = 640 tokens of KV.
  auto too_big = s->Submit(Spec({.model = 1, .prompt = 600, .max_new = 100}));
  CHECK(std::string(too_big.status().message()).find("more KV than fits") != std::string::npos);
  CHECK(s->Submit(Spec({.model = 1, .prompt = 500, .max_new = 100})).ok());
}

}  // namespace
}  // namespace hearth

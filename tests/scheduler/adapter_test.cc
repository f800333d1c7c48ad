// Adapters (ModelConfig::base_model): LoRA-style models that share a base
// model's KV. They load after their base, keep it resident while they have
// requests, go first when it is unloaded, take adapter slots
// (max_resident_adapters), and the running set mixes at most
// max_adapters_per_step of them. Every step runs under SchedulerHarness
// (plan checks, invariants, exactly-once results).

#include <algorithm>
#include <string>
#include <vector>

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
constexpr uint32_t kBase = 0, kAlice = 1, kBob = 2, kCarol = 3, kOther = 4;

// A base model (50 blocks of weights), three adapters of it (2 blocks each)
// and another base (60 blocks), in `memory_blocks` of device memory.
SchedulerOptions Household(int64_t memory_blocks, bool preload_base = true) {
  SchedulerOptions o;
  o.kv.block_size = kBlock;
  o.kv.num_device_blocks = 256;
  o.models.clear();
  o.models.push_back({.name = "llama", .context_length = 4096, .kv_bytes_per_token = kKvPerToken,
                      .weights_bytes = 50 * kBlockBytes, .preload = preload_base});
  for (const char* name : {"alice-lora", "bob-lora", "carol-lora"}) {
    o.models.push_back({.name = name, .context_length = 4096, .weights_bytes = 2 * kBlockBytes,
                        .preload = false, .base_model = "llama"});
  }
  o.models.push_back({.name = "other", .context_length = 4096, .kv_bytes_per_token = kKvPerToken,
                      .weights_bytes = 60 * kBlockBytes, .preload = false});
  o.residency.device_memory_bytes = memory_blocks * kBlockBytes;
  o.residency.max_concurrent_loads = 2;
  return o;
}

std::unique_ptr<SchedulerHarness> Harness(SchedulerOptions o) {
  auto h = SchedulerHarness::Create(std::move(o));
  INFO(h.status().ToString());
  REQUIRE(h.ok());
  return std::move(*h);
}

std::vector<std::string> Commands(const SchedulerHarness& h) {
  return h.last_plan().CommandNames();
}

TEST_CASE("An adapter loads after its base, and its request runs once both are ready",
          "[scheduler][adapters]") {
  auto h = Harness(Household(200, /*preload_base=*/false));
  const RequestId id = *h->Submit(Spec({.model = kAlice, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  // The base first; the adapter waits for it to be ready, not just loading.
  CHECK(Commands(*h) == std::vector<std::string>{"load 0"});
  REQUIRE(h->Step().ok());
  CHECK(Commands(*h) == std::vector<std::string>{"load 1"});
  CHECK(h->last_plan().Find(id) == nullptr);
  REQUIRE(h->Step().ok());
  CHECK(h->last_plan().Find(id) != nullptr);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(id).phase == RequestPhase::kFinished);
}

TEST_CASE("Adapter slots: a new adapter unloads the least recently used idle one",
          "[scheduler][adapters]") {
  SchedulerOptions o = Household(200);
  o.residency.max_resident_adapters = 2;
  auto h = Harness(o);
  for (uint32_t m : {kAlice, kBob}) {
    REQUIRE(h->Submit(Spec({.model = m, .prompt = 32, .max_new = 8})).ok());
    REQUIRE(h->RunUntilIdle().ok());
  }
  const RequestId carol = *h->Submit(Spec({.model = kCarol, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  // Alice's adapter, the older of the two idle ones, gives its slot.
  CHECK(Commands(*h) == std::vector<std::string>{"unload 1", "load 3"});
  CHECK(h->scheduler().stats().resident_weight_bytes == (50 + 2 + 2) * kBlockBytes);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(carol).phase == RequestPhase::kFinished);
}

TEST_CASE("A base outlives its adapters' requests and unloads after them",
          "[scheduler][adapters]") {
  // Room for one base at a time: 50 + 2 for llama and alice's adapter, 60
  // for the other, and their KV, in 100 blocks.
  auto h = Harness(Household(100));
  h->keep_history(true);
  const RequestId alice = *h->Submit(Spec({.model = kAlice, .prompt = 32, .max_new = 40}));
  REQUIRE(h->StepUntilDecoding(alice).ok());
  // The other base must wait: llama is busy through alice's adapter.
  const RequestId other = *h->Submit(Spec({.model = kOther, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  CHECK(h->last_plan().unloads_of[kBase] == 0);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(alice).phase == RequestPhase::kFinished);
  CHECK(h->results().at(other).phase == RequestPhase::kFinished);
  // When llama went, its adapter went first, in the same plan.
  bool seen = false;
  for (const testing::PlanCopy& p : h->history()) {
    const auto& c = p.model_commands;
    const auto base = std::find_if(c.begin(), c.end(), [](const ModelCommand& m) {
      return m.kind == ModelCommandKind::kUnload && m.model == ModelId(kBase);
    });
    if (base == c.end()) continue;
    seen = true;
    CHECK(std::any_of(c.begin(), base, [](const ModelCommand& m) {
      return m.kind == ModelCommandKind::kUnload && m.model == ModelId(kAlice);
    }));
  }
  CHECK(seen);
}

// Room for llama and an adapter, or for the other base, not for both: in
// either submission order both requests finish. The other base first once
// waited forever for llama, kept resident only by the adapter request
// queued behind it, and held that adapter's load back.
TEST_CASE("A base kept only by a waiting adapter request never blocks the other base",
          "[scheduler][adapters]") {
  for (const bool other_first : {true, false}) {
    INFO((other_first ? "other first" : "adapter first"));
    auto h = Harness(Household(100));
    std::vector<RequestId> ids;
    for (uint32_t m : other_first ? std::vector<uint32_t>{kOther, kAlice}
                                  : std::vector<uint32_t>{kAlice, kOther}) {
      ids.push_back(*h->Submit(Spec({.model = m, .prompt = 32, .max_new = 8})));
    }
    REQUIRE(h->RunUntilIdle(200).ok());
    for (RequestId id : ids) {
      INFO(id.ToString());
      REQUIRE(h->results().contains(id));
      CHECK(h->results().at(id).phase == RequestPhase::kFinished);
    }
  }
}

TEST_CASE("The running set mixes at most max_adapters_per_step adapters",
          "[scheduler][adapters]") {
  SchedulerOptions o = Household(300);
  o.residency.max_adapters_per_step = 2;
  auto h = Harness(o);
  h->keep_history(true);
  std::vector<RequestId> ids;
  for (int i = 0; i < 4; ++i) {
    for (uint32_t m : {kAlice, kBob, kCarol}) {
      ids.push_back(*h->Submit(Spec({.model = m, .prompt = 24, .max_new = 6 + 3 * i})));
    }
  }
  ids.push_back(*h->Submit(Spec({.model = kBase, .prompt = 32, .max_new = 8})));
  REQUIRE(h->RunUntilIdle().ok());
  for (RequestId id : ids) CHECK(h->results().at(id).phase == RequestPhase::kFinished);
  // Which adapter each request used.
  auto adapter_of = [&](RequestId id) {
    const auto at = std::find(ids.begin(), ids.end(), id) - ids.begin();
    return at == 12 ? kBase : kAlice + static_cast<uint32_t>(at % 3);
  };
  bool three_wanted = false;
  for (const testing::PlanCopy& p : h->history()) {
    std::vector<uint32_t> adapters;
    for (const auto& s : p.sequences) {
      const uint32_t a = adapter_of(s.id);
      if (a != kBase && std::find(adapters.begin(), adapters.end(), a) == adapters.end()) {
        adapters.push_back(a);
      }
    }
    CHECK(adapters.size() <= 2);
    three_wanted = three_wanted || adapters.size() == 2;
  }
  CHECK(three_wanted);
}

TEST_CASE("A failed base load fails its adapters' waiting requests with the reason",
          "[scheduler][adapters]") {
  auto h = Harness(Household(200, /*preload_base=*/false));
  const RequestId id = *h->Submit(Spec({.model = kBob, .prompt = 32, .max_new = 8}));
  auto plan = h->scheduler().Plan(h->now());
  REQUIRE(plan.ok());
  REQUIRE((*plan)->model_commands.size() == 1);
  StepOutcome out;
  out.step = (*plan)->step;
  out.failed_loads.push_back({ModelId(kBase), "out of memory"});
  REQUIRE(h->scheduler().Complete(out).ok());
  std::vector<RequestResult> results;
  h->scheduler().DrainResults(&results);
  REQUIRE(results.size() == 1);
  CHECK(results[0].id == id);
  CHECK(results[0].phase == RequestPhase::kFailed);
  CHECK_THAT(results[0].message,
             Catch::Contains("base model \"llama\" of adapter \"bob-lora\" failed to load: out of memory"));
}

TEST_CASE("Adapter options are validated", "[scheduler][adapters]") {
  auto message = [](SchedulerOptions o) {
    return std::string(Scheduler::Create(std::move(o)).status().message());
  };
  SchedulerOptions o = Household(200);
  o.models[1].base_model = "nobody";
  CHECK_THAT(message(o), Catch::Contains("models[1].base_model"));
  o = Household(200);
  o.models[1].base_model = "alice-lora";
  CHECK_THAT(message(o), Catch::Contains("not another model"));
  o = Household(200);
  o.models[2].base_model = "alice-lora";
  CHECK_THAT(message(o), Catch::Contains("itself an adapter"));
  o = Household(200);
  o.models[1].kv_bytes_per_token = 7;
  CHECK_THAT(message(o), Catch::Contains("shares its base's KV"));
  o = Household(200);
  o.models[1].context_length = 8192;
  CHECK_THAT(message(o), Catch::Contains("at most its base's"));
  o = Household(200, /*preload_base=*/false);
  o.models[1].preload = true;
  CHECK_THAT(message(o), Catch::Contains("is resident only with its base"));
  o = Household(200);
  o.residency.max_adapters_per_step = -1;
  CHECK_THAT(message(o), Catch::Contains("residency.max_adapters_per_step"));
  o = Household(200);
  o.residency.max_resident_adapters = 1;
  o.models[1].preload = o.models[2].preload = true;
  CHECK_THAT(message(o), Catch::Contains("2 adapters are preloaded"));
}


TEST_CASE("An adapter checks token ids against its base's vocabulary", "[scheduler][adapters]") {
  SchedulerOptions o = Household(200);
  o.models[kBase].vocab_size = 100;
  auto s = Scheduler::Create(o);
  REQUIRE(s.ok());
  CHECK((*s)->options().models[kAlice].vocab_size == 100);
  RequestSpec spec = Spec({.model = kAlice, .prompt = 2, .max_new = 4});
  spec.prompt_token_ids = {5, 999};
  const absl::Status refused = (*s)->Submit(spec).status();
  CHECK(refused.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(refused.message()), Catch::Contains("999"));
}

}  // namespace
}  // namespace hearth

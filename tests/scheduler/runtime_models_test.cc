// Models and adapters at run time (Scheduler::AddModel / RemoveModel): a
// household adds a model or a member's LoRA without a restart. An added
// model takes requests at once and loads through the plan when they want it;
// removal waits for every request of the model and for its adapters, then
// unloads it; ids are never reused; additions are checked as Create checks
// the options. Every step runs under SchedulerHarness (plan checks,
// invariants, exactly-once results); the threaded case runs under TSan.

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "hearth/scheduler/scheduler.h"
#include "scheduler/scheduler_peer.h"
#include "tests/testing/fake_executor.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

constexpr int64_t kKvPerToken = 1000;
constexpr int32_t kBlock = 16;
constexpr int64_t kBlockBytes = kKvPerToken * kBlock;

// One preloaded base model of 50 blocks of weights in `memory_blocks` of
// device memory (0: no residency).
SchedulerOptions OneModel(int64_t memory_blocks) {
  SchedulerOptions o;
  o.kv.block_size = kBlock;
  o.kv.num_device_blocks = 256;
  o.models = {{.name = "llama", .context_length = 4096, .kv_bytes_per_token = kKvPerToken,
               .weights_bytes = 50 * kBlockBytes, .preload = true}};
  o.residency.device_memory_bytes = memory_blocks * kBlockBytes;
  return o;
}

ModelConfig Base(std::string name, int64_t weight_blocks) {
  return {.name = std::move(name), .context_length = 2048, .kv_bytes_per_token = kKvPerToken,
          .weights_bytes = weight_blocks * kBlockBytes};
}

ModelConfig Lora(std::string name, std::string base) {
  return {.name = std::move(name), .context_length = 2048, .weights_bytes = 2 * kBlockBytes,
          .base_model = std::move(base)};
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

TEST_CASE("A model added at run time takes requests at once and loads when they want it",
          "[scheduler][models]") {
  auto h = Harness(OneModel(200));
  Scheduler& s = h->scheduler();
  const absl::StatusOr<ModelId> qwen = s.AddModel(Base("qwen", 60));
  REQUIRE(qwen.ok());
  CHECK(qwen->value() == 1);
  CHECK(*s.FindModel("qwen") == *qwen);
  CHECK(s.GetModel(*qwen)->weights_bytes == 60 * kBlockBytes);
  // Create's options are what Create saw.
  CHECK(s.options().models.size() == 1);

  // Nothing loads for a model nobody asks for.
  REQUIRE(h->Step().ok());
  CHECK(Commands(*h).empty());
  const RequestId id = *h->Submit(Spec({.model = qwen->value(), .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  CHECK(Commands(*h) == std::vector<std::string>{"load 1"});
  CHECK(h->last_plan().Find(id) == nullptr);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(id).phase == RequestPhase::kFinished);
  CHECK(s.stats().resident_weight_bytes == (50 + 60) * kBlockBytes);
}

TEST_CASE("Removing a model waits for its requests then unloads it and never reuses its id",
          "[scheduler][models]") {
  auto h = Harness(OneModel(200));
  Scheduler& s = h->scheduler();
  const ModelId qwen = *s.AddModel(Base("qwen", 60));
  const RequestId running = *h->Submit(Spec({.model = qwen.value(), .prompt = 32, .max_new = 40}));
  const RequestId queued = *h->Submit(Spec({.model = qwen.value(), .prompt = 32, .max_new = 4}));
  REQUIRE(h->StepUntilDecoding(running).ok());

  absl::Status busy = s.RemoveModel(qwen);
  CHECK(busy.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(busy.message(), "2 requests not ended"));
  REQUIRE(s.Cancel(queued).ok());
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(running).phase == RequestPhase::kFinished);
  CHECK(h->results().at(queued).phase == RequestPhase::kCancelled);

  REQUIRE(s.RemoveModel(qwen).ok());
  CHECK(s.RemoveModel(qwen).code() == absl::StatusCode::kNotFound);
  CHECK(s.FindModel("qwen").status().code() == absl::StatusCode::kNotFound);
  CHECK(s.GetModel(qwen).status().code() == absl::StatusCode::kNotFound);
  absl::StatusOr<RequestId> late = s.Submit(Spec({.model = qwen.value(), .prompt = 8, .max_new = 2}));
  CHECK(late.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(late.status().message(), "was removed"));
  // The engine hears of it at the next plan, which unloads the weights.
  CHECK(s.NextEventTime() == absl::InfinitePast());
  REQUIRE(h->Step().ok());
  CHECK(Commands(*h) == std::vector<std::string>{"unload 1"});
  CHECK(s.stats().resident_weight_bytes == 50 * kBlockBytes);
  REQUIRE(h->Step().ok());
  CHECK(Commands(*h).empty());

  // The name is free again, under a new id.
  const ModelId again = *s.AddModel(Base("qwen", 60));
  CHECK(again.value() == 2);
  const RequestId later = *h->Submit(Spec({.model = again.value(), .prompt = 32, .max_new = 4}));
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(later).phase == RequestPhase::kFinished);
}

TEST_CASE("A model given at Create can be removed too and its memory goes to KV",
          "[scheduler][models]") {
  SchedulerOptions o = OneModel(200);
  o.models.push_back(Base("qwen", 60));
  o.models.back().preload = false;
  auto h = Harness(o);
  Scheduler& s = h->scheduler();
  const int32_t limit_with_llama = s.stats().kv_block_limit;
  REQUIRE(s.RemoveModel(ModelId(0)).ok());
  REQUIRE(h->Step().ok());
  CHECK(Commands(*h) == std::vector<std::string>{"unload 0"});
  CHECK(s.stats().kv_block_limit > limit_with_llama);
  const RequestId id = *h->Submit(Spec({.model = 1, .prompt = 32, .max_new = 4}));
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(id).phase == RequestPhase::kFinished);
}

TEST_CASE("An adapter added at run time runs on its base which outlives it",
          "[scheduler][models][adapters]") {
  auto h = Harness(OneModel(200));
  Scheduler& s = h->scheduler();
  const ModelId ana = *s.AddModel(Lora("ana-lora", "llama"));
  // Its KV size and vocabulary read as its base's.
  CHECK(s.GetModel(ana)->kv_bytes_per_token == kKvPerToken);
  const RequestId id = *h->Submit(Spec({.model = ana.value(), .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  CHECK(Commands(*h) == std::vector<std::string>{"load 1"});
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(id).phase == RequestPhase::kFinished);

  absl::Status base = s.RemoveModel(ModelId(0));
  CHECK(base.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(base.message(), "adapter \"ana-lora\""));
  REQUIRE(s.RemoveModel(ana).ok());
  REQUIRE(s.RemoveModel(ModelId(0)).ok());
  REQUIRE(h->Step().ok());
  // The adapter goes first, and the base with it.
  CHECK(Commands(*h) == std::vector<std::string>{"unload 1", "unload 0"});
  CHECK(s.stats().resident_weight_bytes == 0);
  // No model is left: every request is refused until one is added.
  CHECK(s.Submit(Spec({.prompt = 8, .max_new = 2})).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(s.AddModel(Lora("bob-lora", "llama")).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("AddModel refuses what Create would refuse and names the field", "[scheduler][models]") {
  auto h = Harness(OneModel(200));
  Scheduler& s = h->scheduler();
  struct Case {
    const char* what;
    ModelConfig config;
    const char* message;
  };
  ModelConfig too_long = Base("long", 1);
  too_long.context_length = 1;
  ModelConfig heavy = Base("heavy", 300);
  ModelConfig wide = Base("wide", 1);
  wide.kv_bytes_per_token = 2 * kKvPerToken;
  ModelConfig no_kv = Base("no-kv", 1);
  no_kv.kv_bytes_per_token = 0;
  ModelConfig bad_vocab = Lora("bad-vocab", "llama");
  bad_vocab.vocab_size = 7;
  ModelConfig bad_name = Base(std::string("a\0b", 3), 1);
  s.AddModel(Lora("ana-lora", "llama")).IgnoreError();
  const std::vector<Case> cases = {
      {"a name in use", Base("llama", 1), "llama"},
      {"an invalid name", bad_name, "ModelConfig.name"},
      {"a context below 2", too_long, "ModelConfig.context_length"},
      {"weights that leave no room for KV", heavy, "ModelConfig.weights_bytes"},
      {"KV wider than the blocks cut at Create", wide, "at most 1000 bytes per token"},
      {"no KV size with residency", no_kv, "ModelConfig.kv_bytes_per_token"},
      {"an adapter of an unknown base", Lora("x", "mistral"), "ModelConfig.base_model"},
      {"an adapter of an adapter", Lora("y", "ana-lora"), "itself an adapter"},
      {"an adapter's own vocabulary", bad_vocab, "ModelConfig.vocab_size"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    absl::StatusOr<ModelId> r = s.AddModel(c.config);
    INFO(r.status().ToString());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(r.status().message(), c.message));
    CHECK(absl::StartsWith(r.status().message(), "AddModel: "));
  }
  // Nothing refused was registered.
  CHECK(*s.FindModel("llama") == ModelId(0));
  CHECK(s.GetModel(ModelId(2)).status().code() == absl::StatusCode::kNotFound);
  CHECK(s.RemoveModel(ModelId(99)).code() == absl::StatusCode::kNotFound);
  CHECK(s.RemoveModel(ModelId()).code() == absl::StatusCode::kNotFound);
  REQUIRE(h->RunUntilIdle().ok());
}

TEST_CASE("Without residency an added model runs at once and ids run out after 4096",
          "[scheduler][models]") {
  auto h = Harness(OneModel(0));
  Scheduler& s = h->scheduler();
  ModelConfig small = Base("small", 0);
  small.context_length = 64;
  const ModelId m = *s.AddModel(small);
  const RequestId id = *h->Submit(Spec({.model = m.value(), .prompt = 32, .max_new = 4}));
  REQUIRE(h->Step().ok());
  CHECK(Commands(*h).empty());
  CHECK(h->last_plan().Find(id) != nullptr);
  CHECK(h->last_plan().Find(id)->model == m);
  // Its own context, not Create's model's.
  CHECK(s.Submit(Spec({.model = m.value(), .prompt = 60, .max_new = 8})).status().code() ==
        absl::StatusCode::kInvalidArgument);
  REQUIRE(h->RunUntilIdle().ok());
  // Registering and removing again and again takes ids for good.
  int32_t added = 2;
  absl::StatusOr<ModelId> last;
  for (;; ++added) {
    last = s.AddModel(Base(absl::StrCat("m", added), 0));
    if (!last.ok()) break;
    REQUIRE(s.RemoveModel(*last).ok());
  }
  CHECK(last.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(added == 4096);
  REQUIRE(h->Step().ok());
  CHECK(s.CheckInvariants().ok());
}

TEST_CASE("Models come and go while host threads submit for them", "[scheduler][threads]") {
  SchedulerOptions o = OneModel(400);
  o.max_running = 16;
  o.users = {{"a", 1}, {"b", 1}, {"c", 1}};
  o.residency.max_concurrent_loads = 2;
  auto sched = *Scheduler::Create(o);
  constexpr int kSubmitters = 2, kPerThread = 200, kSwaps = 60;
  std::atomic<int> done{0};
  std::atomic<int> bad{0};
  std::mutex mu;
  std::vector<RequestId> accepted;
  // The model ids the submitters aim at: the one the admin thread added
  // last, which it may remove at any moment.
  std::atomic<uint32_t> current{0};

  std::vector<std::thread> hosts;
  for (int t = 0; t < kSubmitters; ++t) {
    hosts.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(t) + 7);
      std::vector<RequestId> mine;
      for (int i = 0; i < kPerThread; ++i) {
        RequestSpec spec = Spec({.user = static_cast<uint32_t>(t),
                                 .model = rng() % 3 == 0 ? 0 : current.load(),
                                 .prompt = 1 + static_cast<int32_t>(rng() % 48),
                                 .max_new = 1 + static_cast<int32_t>(rng() % 8)});
        absl::StatusOr<RequestId> id = sched->Submit(spec);
        if (id.ok()) {
          mine.push_back(*id);
        } else if (id.status().code() != absl::StatusCode::kInvalidArgument ||
                   !absl::StrContains(id.status().message(), "removed")) {
          ++bad;  // Catch2 is not thread-safe: counted, checked after join.
        }
        if (rng() % 4 == 0) std::this_thread::yield();
      }
      std::lock_guard<std::mutex> lock(mu);
      accepted.insert(accepted.end(), mine.begin(), mine.end());
      ++done;
    });
  }
  hosts.emplace_back([&] {
    std::mt19937_64 rng(99);
    std::vector<ModelId> added;
    for (int i = 0; i < kSwaps; ++i) {
      absl::StatusOr<ModelId> m = sched->AddModel(
          rng() % 2 == 0 ? Lora(absl::StrCat("lora", i), "llama") : Base(absl::StrCat("m", i), 40));
      if (!m.ok()) {
        ++bad;
        continue;
      }
      added.push_back(*m);
      current.store(m->value());
      std::this_thread::yield();
      // Remove the older ones that have no requests left; a refusal says why.
      for (size_t k = 0; k + 1 < added.size();) {
        absl::Status r = sched->RemoveModel(added[k]);
        if (r.ok()) {
          added.erase(added.begin() + static_cast<std::ptrdiff_t>(k));
        } else {
          if (r.code() != absl::StatusCode::kFailedPrecondition) ++bad;
          ++k;
        }
      }
    }
    ++done;
  });

  testing::FakeExecutor executor;
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  StepOutcome outcome;
  int steps_after = 0;
  while (steps_after < 1000000) {
    auto plan = sched->Plan(now);
    REQUIRE(plan.ok());
    REQUIRE(executor.Execute(**plan, &outcome).ok());
    REQUIRE(sched->Complete(outcome).ok());
    now += absl::Milliseconds(1);
    sched->DrainResults(&results);
    if (done.load() == kSubmitters + 1) {
      ++steps_after;
      std::lock_guard<std::mutex> lock(mu);
      if (results.size() == accepted.size()) break;
    }
  }
  for (std::thread& t : hosts) t.join();
  CHECK(bad.load() == 0);
  REQUIRE(sched->CheckInvariants().ok());
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(results.size() == accepted.size());
  std::sort(accepted.begin(), accepted.end());
  std::vector<RequestId> ended;
  for (const RequestResult& r : results) {
    ended.push_back(r.id);
    // Nothing ends for want of its model: every load is granted.
    CHECK(r.phase == RequestPhase::kFinished);
  }
  std::sort(ended.begin(), ended.end());
  CHECK(ended == accepted);
  CHECK(internal::SchedulerPeer::allocator(*sched).num_owned() == 0);
}

}  // namespace
}  // namespace hearth

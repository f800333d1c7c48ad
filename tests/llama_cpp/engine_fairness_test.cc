// Fairness on the real engine: one household member floods llama.cpp with
// requests while two others wait. Under VTC (alone, and as the user level of
// the "household" policy tree) the service gap between backlogged members
// stays within VTC's bound 2 * max(w_p * L_input, w_q * M); under FIFO, the
// negative control, the flood runs first and the gap far exceeds it.
// Also: requests submitted from several threads while the engine runs all
// come back with the plain llama.cpp tokens.
#ifdef HEARTH_LLAMA_CPP_FOUND

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "catch2/catch.hpp"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/policy/policy_registry.h"
#include "llama_test_env.h"

namespace hearth::llama_cpp {
namespace {

constexpr int32_t kPrompt = 32;
constexpr int32_t kMaxNew = 16;
constexpr int32_t kBatch = 32;

struct FloodRun {
  double gap = 0;
  std::vector<double> first_token_s;  // mean per user
  int finished = 0;
};

FloodRun RunFlood(const testing::TinyLlama& tiny, const std::string& policy) {
  ContextOptions copts;
  copts.n_ctx = 1024;
  copts.n_batch = kBatch;
  copts.n_seq_max = 4;
  copts.n_threads = 1;
  // Bit-identical logits whatever the batch: the run depends on the schedule only.
  copts.disable_flash_attention = true;
  auto ctx = tiny.NewContext(copts);
  REQUIRE(ctx.ok());
  LlamaEngineOptions options;
  options.scheduler.users = {{"flood", 1.0}, {"alice", 1.0}, {"bob", 1.0}};
  auto factory = MakePolicyFactory(policy, PolicyConfig{});
  REQUIRE(factory.ok());
  options.scheduler.policy_factory = *factory;
  ManualClock clock;
  MetricsOptions mo = MetricsOptionsFor(options.scheduler);
  mo.clock = &clock;
  auto collector = MetricsCollector::Create(mo);
  REQUIRE(collector.ok());
  options.scheduler.metrics_sink = collector->get();
  auto engine = LlamaEngine::Create(ctx->get(), options);
  REQUIRE(engine.ok());

  std::mt19937_64 rng(11);
  auto submit = [&](uint32_t user) {
    RequestSpec spec;
    spec.user = UserId(user);
    for (int i = 0; i < kPrompt; ++i) spec.prompt_token_ids.push_back(32 + rng() % 95);
    spec.max_new_tokens = kMaxNew;
    REQUIRE((*engine)->Submit(spec).ok());
  };
  for (int i = 0; i < 16; ++i) submit(0);
  for (int i = 0; i < 4; ++i) {
    submit(1);
    submit(2);
  }
  auto done = testing::RunToCompletion(**engine, clock);
  REQUIRE(done.ok());
  (*collector)->Flush();
  const MetricsReport report = (*collector)->Report();
  FloodRun run;
  run.gap = report.max_backlogged_service_gap;
  for (const GroupReport& u : report.users) run.first_token_s.push_back(u.ttft.mean);
  for (const Completion& c : *done) run.finished += c.result.phase == RequestPhase::kFinished;
  return run;
}

TEST_CASE("llama.cpp under Hearth: a flooding member stays within VTC's bound", "[llama_cpp]") {
  auto tiny = testing::TinyLlama::Create();
  REQUIRE(tiny.ok());
  // w_p = 1, w_q = 2 (VTC's defaults), L_input = 32, M = n_batch = 32.
  const double bound = 2.0 * std::max(1.0 * kPrompt, 2.0 * kBatch);

  const FloodRun fifo = RunFlood(**tiny, "fifo");
  CHECK(fifo.finished == 24);
  CHECK(fifo.gap > bound);
  for (const std::string policy : {"vtc", "household"}) {
    INFO("policy " << policy << ", FIFO gap " << fifo.gap);
    const FloodRun fair = RunFlood(**tiny, policy);
    CHECK(fair.finished == 24);
    CHECK(fair.gap >= 0);
    CHECK(fair.gap <= bound);
    // The waiting members get their first tokens much earlier than under FIFO.
    CHECK(fair.first_token_s[1] < 0.5 * fifo.first_token_s[1]);
    CHECK(fair.first_token_s[2] < 0.5 * fifo.first_token_s[2]);
  }
}

TEST_CASE("llama.cpp under Hearth: requests submitted from threads match single runs",
          "[llama_cpp][threads]") {
  auto tiny = testing::TinyLlama::Create();
  REQUIRE(tiny.ok());
  ContextOptions copts;
  copts.n_ctx = 1024;
  copts.n_batch = 64;
  copts.n_seq_max = 6;
  copts.n_threads = 1;
  copts.disable_flash_attention = true;
  auto reference = (*tiny)->NewContext(copts);
  REQUIRE(reference.ok());
  testing::PromptSet set;
  set.count = 12;
  set.max_new_tokens = 12;
  set.seed = 21;
  auto prompts = testing::TieFreePrompts(reference->get(), set);
  REQUIRE(prompts.ok());

  auto ctx = (*tiny)->NewContext(copts);
  REQUIRE(ctx.ok());
  auto engine = LlamaEngine::Create(ctx->get(), LlamaEngineOptions{});
  REQUIRE(engine.ok());
  std::vector<std::vector<RequestId>> ids(3);
  std::vector<std::thread> members;
  std::atomic<int> submitted{0};
  for (int m = 0; m < 3; ++m) {
    members.emplace_back([&, m] {
      for (int k = m; k < set.count; k += 3) {
        RequestSpec spec;
        spec.prompt_token_ids = (*prompts)[k].prompt;
        spec.max_new_tokens = set.max_new_tokens;
        absl::StatusOr<RequestId> id = (*engine)->Submit(spec);
        if (id.ok()) ids[m].push_back(*id);
        submitted.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  RealClock clock;
  std::vector<Completion> done;
  for (int steps = 0; (submitted.load() < set.count || (*engine)->pending() > 0) && steps < 100000;
       ++steps) {
    REQUIRE((*engine)->Step(clock).ok());
    for (Completion& c : (*engine)->TakeCompletions()) done.push_back(std::move(c));
  }
  for (std::thread& t : members) t.join();
  for (Completion& c : (*engine)->TakeCompletions()) done.push_back(std::move(c));
  REQUIRE(done.size() == static_cast<size_t>(set.count));
  for (int m = 0; m < 3; ++m) {
    REQUIRE(ids[m].size() == static_cast<size_t>((set.count - m + 2) / 3));
    for (size_t j = 0; j < ids[m].size(); ++j) {
      const int k = m + 3 * static_cast<int>(j);
      auto it = std::find_if(done.begin(), done.end(),
                             [&](const Completion& c) { return c.id == ids[m][j]; });
      REQUIRE(it != done.end());
      CHECK(it->output == (*prompts)[k].run.tokens);
    }
  }
}

}  // namespace
}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_FOUND

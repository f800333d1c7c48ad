// Embeddings (RequestKind::kEmbed): a prompt prefilled like any other,
// never sampled, ending with the step that computes its last position
// (FinishReason::kPooled). Last pooling needs only that position, so it
// reuses cached prefixes; mean pooling needs every position within one stay
// on the device, so it reuses none and is never swapped out.

#include <catch2/catch.hpp>

#include <numeric>
#include <string>
#include <vector>

#include "hearth/metrics/metrics_collector.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::PlanCopy;
using testing::SchedulerHarness;
using testing::Spec;

SchedulerOptions Options() {
  SchedulerOptions o;
  o.kv.block_size = 4;
  o.kv.num_device_blocks = 64;
  o.max_running = 8;
  o.max_batched_tokens = 16;
  o.models[0].vocab_size = 100;
  return o;
}

RequestSpec Embedding(int32_t prompt, Pooling pooling = Pooling::kLast) {
  RequestSpec spec = Spec({.prompt = prompt, .max_new = 0});
  spec.kind = RequestKind::kEmbed;
  spec.pooling = pooling;
  return spec;
}

std::vector<TokenId> Tokens(int32_t n, TokenId first = 1) {
  std::vector<TokenId> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

// Every plan entry of `id` in the harness's history, in step order.
std::vector<PlanCopy::Sequence> EntriesOf(const SchedulerHarness& h, RequestId id) {
  std::vector<PlanCopy::Sequence> out;
  for (const PlanCopy& p : h.history()) {
    if (const PlanCopy::Sequence* s = p.Find(id)) out.push_back(*s);
  }
  return out;
}

TEST_CASE("Embeddings: prefilled in chunks, never sampled, finished by the pooling step",
          "[scheduler][embed]") {
  auto h = *SchedulerHarness::Create(Options());
  h->keep_history(true);
  const RequestId id = *h->Submit(Embedding(40));
  REQUIRE(h->RunUntilIdle(50).ok());
  const std::vector<PlanCopy::Sequence> entries = EntriesOf(*h, id);
  REQUIRE(entries.size() == 3);  // 16 + 16 + 8 positions
  int32_t next = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const PlanCopy::Sequence& s = entries[i];
    CHECK(s.start_position == next);
    next += s.num_tokens;
    CHECK(s.embed);
    CHECK_FALSE(s.mean_pool);
    CHECK_FALSE(s.sample);
    CHECK(s.pool == (i + 1 == entries.size()));
  }
  CHECK(next == 40);
  const RequestResult& r = h->results().at(id);
  CHECK(r.phase == RequestPhase::kFinished);
  CHECK(r.finish_reason == FinishReason::kPooled);
  CHECK(r.output_tokens == 0);
  CHECK(r.prompt_tokens == 40);
  // The vector is its only output: its TTFT is its end.
  CHECK(r.first_token_time == r.end_time);
  // Its blocks are back; the next plan tells the engine to drop it.
  CHECK(h->scheduler().stats().free_device_blocks == 64);
  REQUIRE(h->Step().ok());
  bool released = false;
  for (const PlanCopy& p : h->history()) {
    for (RequestId rel : p.released) released = released || rel == id;
  }
  CHECK(released);
}

TEST_CASE("Embeddings: Submit's rules for the kind's fields", "[scheduler][embed]") {
  auto h = *SchedulerHarness::Create(Options());
  const auto message = [&](const RequestSpec& spec) {
    absl::StatusOr<RequestId> id = h->Submit(spec);
    REQUIRE_FALSE(id.ok());
    CHECK(id.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(id.status().message());
  };
  CHECK_THAT(message(Spec({.prompt = 8, .max_new = 0})),
             Catch::Contains("max_new_tokens is 0") && Catch::Contains("kEmbed"));
  CHECK_THAT(message([] {
               RequestSpec s = Embedding(8);
               s.max_new_tokens = 3;
               return s;
             }()),
             Catch::Contains("must be 0"));
  CHECK_THAT(message([] {
               RequestSpec s = Embedding(8);
               s.predicted_output.expected_tokens = 1;
               return s;
             }()),
             Catch::Contains("predicted_output"));
  CHECK_THAT(message([] {
               RequestSpec s = Embedding(8);
               s.tpot_slo = absl::Milliseconds(50);
               return s;
             }()),
             Catch::Contains("tpot_slo"));
  CHECK_THAT(message([] {
               RequestSpec s = Spec({.prompt = 8, .max_new = 4});
               s.pooling = Pooling::kMean;
               return s;
             }()),
             Catch::Contains("pooling is mean but kind is generate"));
  CHECK_THAT(message([] {
               RequestSpec s = Embedding(8);
               s.kind = static_cast<RequestKind>(7);
               return s;
             }()),
             Catch::Contains("kind is 7"));
  CHECK_THAT(message([] {
               RequestSpec s = Embedding(8);
               s.pooling = static_cast<Pooling>(200);
               return s;
             }()),
             Catch::Contains("pooling is 200"));
  // No TPOT target is no target.
  RequestSpec ok = Embedding(8);
  ok.tpot_slo = absl::InfiniteDuration();
  CHECK(h->Submit(ok).ok());
}

TEST_CASE("Embeddings: last pooling reuses a cached prefix, mean pooling computes every position",
          "[scheduler][embed]") {
  SchedulerOptions o = Options();
  o.kv.enable_prefix_caching = true;
  auto h = *SchedulerHarness::Create(o);
  h->keep_history(true);
  RequestSpec chat = Spec({.prompt = 32, .max_new = 2});
  chat.prompt_token_ids = Tokens(32);
  const RequestId first = *h->Submit(chat);
  REQUIRE(h->RunUntilIdle(50).ok());
  REQUIRE(h->results().at(first).phase == RequestPhase::kFinished);

  RequestSpec last = Embedding(32);
  last.prompt_token_ids = Tokens(32);
  const RequestId last_id = *h->Submit(last);
  RequestSpec mean = Embedding(32, Pooling::kMean);
  mean.prompt_token_ids = Tokens(32);
  const RequestId mean_id = *h->Submit(mean);
  REQUIRE(h->RunUntilIdle(50).ok());

  const RequestResult& l = h->results().at(last_id);
  CHECK(l.finish_reason == FinishReason::kPooled);
  // Only the last position is computed (the prompt's blocks are all cached).
  CHECK(l.cached_prompt_tokens == 31);
  const std::vector<PlanCopy::Sequence> last_entries = EntriesOf(*h, last_id);
  REQUIRE(last_entries.size() == 1);
  CHECK(last_entries[0].start_position == 31);
  CHECK(last_entries[0].pool);

  const RequestResult& m = h->results().at(mean_id);
  CHECK(m.finish_reason == FinishReason::kPooled);
  CHECK(m.cached_prompt_tokens == 0);
  const std::vector<PlanCopy::Sequence> mean_entries = EntriesOf(*h, mean_id);
  REQUIRE_FALSE(mean_entries.empty());
  CHECK(mean_entries.front().start_position == 0);
  CHECK(mean_entries.front().mean_pool);
  CHECK(mean_entries.back().pool);

  // A mean-pooled embedding still leaves its blocks for later requests.
  RequestSpec fresh = Embedding(32, Pooling::kMean);
  fresh.prompt_token_ids = Tokens(32, /*first=*/50);
  const RequestId fresh_id = *h->Submit(fresh);
  REQUIRE(h->RunUntilIdle(50).ok());
  REQUIRE(h->results().at(fresh_id).finish_reason == FinishReason::kPooled);
  RequestSpec follow = Spec({.prompt = 32, .max_new = 2});
  follow.prompt_token_ids = Tokens(32, 50);
  const RequestId follow_id = *h->Submit(follow);
  REQUIRE(h->RunUntilIdle(50).ok());
  CHECK(h->results().at(follow_id).cached_prompt_tokens == 31);
}

TEST_CASE("Embeddings: preempted under swap mode, mean pooling recomputes and last pooling swaps",
          "[scheduler][embed]") {
  for (const Pooling pooling : {Pooling::kLast, Pooling::kMean}) {
    INFO("pooling " << PoolingName(pooling));
    SchedulerOptions o = Options();
    o.kv.num_host_blocks = 32;
    o.preemption_mode = PreemptionMode::kSwap;
    o.swap_block_cost_tokens = 1.0;
    o.max_batched_tokens = 8;
    o.work_classes = {{.name = "a"}, {.name = "b", .max_running = 1, .borrow = false}};
    auto h = *SchedulerHarness::Create(o);
    h->keep_history(true);
    // Class b's one slot is taken; the embedding prefills in class a until
    // a class change moves it into b, which preempts it.
    const RequestId other = *h->Submit(Spec({.work_class = 1, .prompt = 4, .max_new = 30}));
    const RequestId embed = *h->Submit(Embedding(48, pooling));
    for (int i = 0; i < 4; ++i) REQUIRE(h->Step().ok());
    const int32_t computed = h->scheduler().GetRequest(embed)->computed_tokens;
    REQUIRE(computed > 8);
    REQUIRE(h->scheduler().SetWorkClass(embed, WorkClassId(1)).ok());
    REQUIRE(h->Step().ok());
    REQUIRE(h->last_plan().preempted.size() == 1);
    const Preemption& p = h->last_plan().preempted[0];
    CHECK(p.id == embed);
    CHECK(p.mode == (pooling == Pooling::kMean ? PreemptionMode::kRecompute
                                               : PreemptionMode::kSwap));
    REQUIRE(h->RunUntilIdle(400).ok());
    CHECK(h->results().at(other).phase == RequestPhase::kFinished);
    CHECK(h->results().at(embed).finish_reason == FinishReason::kPooled);
    const std::vector<PlanCopy::Sequence> entries = EntriesOf(*h, embed);
    // Back on the device: a mean-pooled embedding starts its sum again at
    // position 0 (the harness's plan checker also fails any chunk that does
    // not continue the sum); a swapped one goes on where it was.
    int32_t restart_at = -1;
    for (size_t i = 1; i < entries.size(); ++i) {
      if (entries[i].full_block_table) restart_at = entries[i].start_position;
    }
    CHECK(restart_at == (pooling == Pooling::kMean ? 0 : computed));
  }
}

TEST_CASE("Embeddings: with overlapped planning nothing is planned after the pooling step",
          "[scheduler][embed]") {
  SchedulerOptions o = Options();
  o.overlap_planning = true;
  auto h = *SchedulerHarness::Create(o);
  h->keep_history(true);
  const RequestId embed = *h->Submit(Embedding(40, Pooling::kMean));
  const RequestId chat = *h->Submit(Spec({.prompt = 8, .max_new = 6}));
  REQUIRE(h->RunUntilIdle(50).ok());
  REQUIRE(h->FinishInFlight().ok());
  const std::vector<PlanCopy::Sequence> entries = EntriesOf(*h, embed);
  REQUIRE_FALSE(entries.empty());
  CHECK(entries.back().pool);
  int pools = 0;
  for (const PlanCopy::Sequence& s : entries) pools += s.pool;
  CHECK(pools == 1);
  CHECK(h->results().at(embed).finish_reason == FinishReason::kPooled);
  CHECK(h->results().at(chat).output_tokens == 6);
}

TEST_CASE("Embeddings: a held embedding runs once released", "[scheduler][embed]") {
  auto h = *SchedulerHarness::Create(Options());
  RequestSpec spec = Embedding(12);
  spec.hold = true;
  const RequestId id = *h->Submit(spec);
  for (int i = 0; i < 3; ++i) REQUIRE(h->Step().ok());
  CHECK(h->scheduler().GetRequest(id)->phase == RequestPhase::kHeld);
  REQUIRE(h->scheduler().Release(id).ok());
  REQUIRE(h->RunUntilIdle(20).ok());
  CHECK(h->results().at(id).finish_reason == FinishReason::kPooled);
}

TEST_CASE("Embeddings: metrics judge the vector's time as TTFT and count no tokens",
          "[scheduler][embed][metrics]") {
  SchedulerOptions o = Options();
  o.work_classes = {{.name = "search", .ttft_slo = absl::Milliseconds(15)}};
  auto collector = *MetricsCollector::Create(MetricsOptionsFor(o));
  o.metrics_sink = collector.get();
  auto h = *SchedulerHarness::Create(o);
  // One step (done at its plan's now: TTFT 0, met); three steps of 10 ms
  // (20 ms, missed).
  REQUIRE(h->Submit(Embedding(12)).ok());
  REQUIRE(h->RunUntilIdle(20).ok());
  REQUIRE(h->Submit(Embedding(40, Pooling::kMean)).ok());
  REQUIRE(h->RunUntilIdle(20).ok());
  collector->Flush();
  const MetricsReport r = collector->Report();
  CHECK(r.total.finished == 2);
  CHECK(r.total.ttft.count == 2);
  CHECK(r.total.output_tokens == 0);
  CHECK(r.total.prefill_tokens == 52);
  CHECK(r.total.ttft_slo.met == 1);
  CHECK(r.total.ttft_slo.missed == 1);
  // No TPOT target, so nothing judged there.
  CHECK(r.total.tpot_slo.judged() == 0);
}

}  // namespace
}  // namespace hearth

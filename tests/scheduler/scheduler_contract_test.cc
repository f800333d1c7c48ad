// Examples of the iteration contract: validation, chunked prefill, prefix
// hits, preemption in both modes, cancellation, deadlines, failures.

#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/exec/engine_loop.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"
#include "scheduler/scheduler_peer.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

bool Contains(const absl::Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

std::unique_ptr<SchedulerHarness> Harness(SchedulerOptions o) {
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return std::move(*h);
}

std::vector<TokenId> Ids(int32_t n, int32_t salt) {
  std::vector<TokenId> v(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * 7 + salt) % 500;
  return v;
}

TEST_CASE("Create validates options and names the field", "[scheduler]") {
  SchedulerOptions o;
  o.max_running = 0;
  auto s = Scheduler::Create(o);
  REQUIRE(s.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Contains(s.status(), "max_running"));
  o = SchedulerOptions();
  o.users.push_back(UserConfig{});  // Duplicate "default".
  CHECK(Contains(Scheduler::Create(o).status(), "used twice"));
  o = SchedulerOptions();
  o.preemption_mode = PreemptionMode::kSwap;
  CHECK(Contains(Scheduler::Create(o).status(), "num_host_blocks"));
  o = SchedulerOptions();
  o.kv.watermark_blocks = o.kv.num_device_blocks;
  CHECK(Contains(Scheduler::Create(o).status(), "watermark"));
}

TEST_CASE("Submit rejects bad requests with specific errors and leaves nothing", "[scheduler]") {
  SchedulerOptions o;
  o.kv.num_device_blocks = 10;
  o.kv.block_size = 16;  // 160 tokens in all.
  o.models[0].context_length = 1000;
  o.models[0].vocab_size = 100;
  o.max_pending_requests = 2;
  auto sched = *Scheduler::Create(o);

  CHECK(Contains(sched->Submit(Spec({.prompt = 0, .max_new = 5})).status(), "prompt_tokens is 0"));
  CHECK(Contains(sched->Submit(Spec({.prompt = 5, .max_new = 0})).status(), "max_new_tokens is 0"));
  CHECK(Contains(sched->Submit(Spec({.prompt = 900, .max_new = 200})).status(),
                 "allows at most 1000"));
  // Larger than the whole cache: rejected now, never deadlocks later.
  auto too_big = sched->Submit(Spec({.prompt = 150, .max_new = 20}));
  CHECK(too_big.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Contains(too_big.status(), "more than the whole KV cache"));
  RequestSpec s = Spec({.prompt = 4, .max_new = 4});
  s.user = UserId(3);
  CHECK(Contains(sched->Submit(s).status(), "user 3 is unknown"));
  s = Spec({.prompt = 4, .max_new = 4});
  s.work_class = WorkClassId(1);
  CHECK(Contains(sched->Submit(s).status(), "work_class 1 is unknown"));
  s = Spec({.prompt = 4, .max_new = 4});
  s.model = ModelId(2);
  CHECK(Contains(sched->Submit(s).status(), "model 2 is unknown"));
  s = Spec({.prompt = 4, .max_new = 4});
  s.prompt_token_ids = {1, 2, 3};
  CHECK(Contains(sched->Submit(s).status(), "has 3 ids"));
  s.prompt_token_ids = {1, 2, 3, 100};
  CHECK(Contains(sched->Submit(s).status(), "prompt_token_ids[3] is 100"));

  REQUIRE(sched->Submit(Spec({.prompt = 4, .max_new = 4})).ok());
  REQUIRE(sched->Submit(Spec({.prompt = 4, .max_new = 4})).ok());
  CHECK(sched->Submit(Spec({.prompt = 4, .max_new = 4})).status().code() ==
        absl::StatusCode::kResourceExhausted);
  // Only the two accepted requests exist.
  auto plan = sched->Plan(absl::UnixEpoch());
  REQUIRE(plan.ok());
  CHECK((*plan)->sequences.size() == 2);
  CHECK(sched->stats().waiting + sched->stats().running == 2);
}

TEST_CASE("Plan and Complete enforce their order and matching outcomes", "[scheduler]") {
  auto sched = *Scheduler::Create(SchedulerOptions());
  CHECK(sched->Complete(StepOutcome{}).code() == absl::StatusCode::kFailedPrecondition);
  RequestId id = *sched->Submit(Spec({.prompt = 8, .max_new = 2}));
  const absl::Time t0 = absl::UnixEpoch() + absl::Seconds(5);
  auto plan = sched->Plan(t0);
  REQUIRE(plan.ok());
  CHECK(sched->Plan(t0).status().code() == absl::StatusCode::kFailedPrecondition);

  StepOutcome bad;
  bad.step = (*plan)->step;
  CHECK(Contains(sched->Complete(bad), "report exactly one per planned sequence"));
  bad.sequences.push_back({.id = RequestId(999), .produced_token = true});
  CHECK(Contains(sched->Complete(bad), "plan order"));
  bad.sequences[0] = {.id = id, .produced_token = false};
  CHECK(Contains(sched->Complete(bad), "asked for a sampled token"));
  bad.sequences[0] = {.id = id, .produced_token = true, .finish = FinishReason::kLength};
  CHECK(Contains(sched->Complete(bad), "decided by the scheduler"));
  bad.sequences[0] = {.id = id, .produced_token = true};
  bad.step = 77;
  CHECK(Contains(sched->Complete(bad), "outstanding plan is step"));
  // Nothing was applied: the correct outcome still goes through.
  bad.step = (*plan)->step;
  REQUIRE(sched->Complete(bad).ok());
  CHECK(sched->GetRequest(id)->output_tokens == 1);
  CHECK(sched->Plan(t0 - absl::Seconds(1)).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Chunked prefill covers exactly the prompt's positions", "[scheduler]") {
  SchedulerOptions o;
  o.max_batched_tokens = 64;
  o.max_running = 8;
  o.max_prefill_chunk_tokens = 16;
  auto h = Harness(o);
  h->keep_history(true);
  RequestId id = *h->Submit(Spec({.prompt = 100, .max_new = 3}));
  REQUIRE(h->RunUntilIdle().ok());
  std::vector<int> covered(100, 0);
  int samples = 0;
  for (const auto& plan : h->history()) {
    const auto* s = plan.Find(id);
    if (s == nullptr) continue;
    if (s->start_position < 100) {
      CHECK(s->num_tokens <= 16);
      for (int p = s->start_position; p < s->start_position + s->num_tokens; ++p) ++covered[p];
    }
    samples += s->sample;
  }
  for (int p = 0; p < 100; ++p) CHECK(covered[p] == 1);
  CHECK(samples == 3);
  CHECK(h->results().at(id).output_tokens == 3);
  CHECK(h->results().at(id).finish_reason == FinishReason::kLength);
}

TEST_CASE("Decodes come first and prefills never push them out", "[scheduler]") {
  SchedulerOptions o;
  o.max_batched_tokens = 32;
  o.max_running = 8;
  auto h = Harness(o);
  std::vector<RequestId> short_ids;
  for (int i = 0; i < 4; ++i) short_ids.push_back(*h->Submit(Spec({.prompt = 4, .max_new = 50})));
  REQUIRE(h->Step().ok());  // All four prefills fit; each samples its first token.
  RequestId big = *h->Submit(Spec({.prompt = 1000, .max_new = 5}));
  REQUIRE(h->Step().ok());
  const auto& plan = h->last_plan();
  REQUIRE(plan.sequences.size() == 5);
  for (int i = 0; i < 4; ++i) CHECK(plan.sequences[i].num_tokens == 1);
  CHECK(plan.sequences[4].id == big);
  CHECK(plan.sequences[4].num_tokens == 28);
}

TEST_CASE("Prefix-cache hits reuse blocks and skip their prefill", "[scheduler]") {
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 64;
  auto h = Harness(o);
  RequestSpec a = Spec({.prompt = 64, .max_new = 2});
  a.prompt_token_ids = Ids(64, 1);
  RequestId first = *h->Submit(a);
  REQUIRE(h->RunUntilIdle().ok());
  std::vector<BlockId> first_blocks;
  // Same first 48 tokens, different tail: three full blocks hit.
  RequestSpec b = a;
  for (int i = 48; i < 64; ++i) b.prompt_token_ids[i] = 499 - i;
  h->keep_history(true);
  RequestId second = *h->Submit(b);
  REQUIRE(h->Step().ok());
  const auto* s = h->last_plan().Find(second);
  REQUIRE(s != nullptr);
  CHECK(s->start_position == 48);
  CHECK(s->num_tokens == 16);
  CHECK(h->results().at(first).phase == RequestPhase::kFinished);
  CHECK(h->scheduler().stats().prefix_hit_tokens == 48);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(second).cached_prompt_tokens == 48);

  // An identical prompt hits every block; its last position is recomputed in
  // a private copy of the last block (copy-on-write), not in the shared one.
  RequestSpec c = a;
  RequestSpec d = a;
  RequestId third = *h->Submit(c);
  RequestId fourth = *h->Submit(d);
  REQUIRE(h->Step().ok());
  const auto* t = h->last_plan().Find(third);
  REQUIRE(t != nullptr);
  CHECK(t->start_position == 63);
  CHECK(t->num_tokens == 1);
  const auto* f = h->last_plan().Find(fourth);
  REQUIRE(f != nullptr);
  CHECK(f->start_position == 63);
  // Both share the first three blocks; the fourth block differs.
  CHECK(std::equal(t->block_table.begin(), t->block_table.begin() + 3, f->block_table.begin()));
  CHECK(t->block_table[3] != f->block_table[3]);
  CHECK(h->last_plan().copy_on_write.size() >= 1);
  REQUIRE(h->RunUntilIdle().ok());
}

void RunPreemption(PreemptionMode mode) {
  SchedulerOptions o;
  o.kv.block_size = 4;
  o.kv.num_device_blocks = 12;  // 48 tokens for two requests growing to 40.
  o.kv.num_host_blocks = mode == PreemptionMode::kSwap ? 16 : 0;
  o.preemption_mode = mode;
  o.max_batched_tokens = 64;
  o.max_running = 8;
  auto h = Harness(o);
  h->keep_history(true);
  RequestId a = *h->Submit(Spec({.prompt = 10, .max_new = 30}));
  RequestId b = *h->Submit(Spec({.prompt = 10, .max_new = 30}));
  REQUIRE(h->RunUntilIdle().ok());
  int preempted = 0, swap_outs = 0, swap_ins = 0;
  for (const auto& p : h->history()) {
    for (const auto& e : p.preempted) {
      ++preempted;
      CHECK(e.mode == mode);
    }
    swap_outs += static_cast<int>(p.swap_out.size());
    swap_ins += static_cast<int>(p.swap_in.size());
  }
  CHECK(preempted >= 1);
  if (mode == PreemptionMode::kSwap) {
    CHECK(swap_outs >= 1);
    CHECK(swap_ins == swap_outs);
  } else {
    CHECK(swap_outs == 0);
  }
  for (RequestId id : {a, b}) {
    const RequestResult& r = h->results().at(id);
    CHECK(r.phase == RequestPhase::kFinished);
    CHECK(r.output_tokens == 30);
  }
  CHECK(h->results().at(b).preemptions >= 1);  // FIFO preempts the later arrival.
  CHECK(h->scheduler().stats().free_host_blocks == o.kv.num_host_blocks);
}

TEST_CASE("Preemption by recompute resumes and finishes with the same token count", "[scheduler]") {
  RunPreemption(PreemptionMode::kRecompute);
}

TEST_CASE("Preemption by swap copies blocks out and back", "[scheduler]") {
  RunPreemption(PreemptionMode::kSwap);
}

TEST_CASE("Cancel ends requests in every phase exactly once", "[scheduler]") {
  SchedulerOptions o;
  o.max_running = 1;
  auto h = Harness(o);
  CHECK(h->scheduler().Cancel(RequestId(12345)).code() == absl::StatusCode::kNotFound);
  RequestId running = *h->Submit(Spec({.prompt = 8, .max_new = 100}));
  RequestId waiting = *h->Submit(Spec({.prompt = 8, .max_new = 100}));
  REQUIRE(h->Step().ok());
  RequestId queued = *h->Submit(Spec({.prompt = 8, .max_new = 100}));
  REQUIRE(h->scheduler().Cancel(queued).ok());
  CHECK(h->scheduler().Cancel(queued).code() == absl::StatusCode::kNotFound);
  REQUIRE(h->scheduler().Cancel(running).ok());
  REQUIRE(h->scheduler().Cancel(waiting).ok());
  const int32_t free_before = internal::SchedulerPeer::allocator(h->scheduler()).num_free();
  REQUIRE(h->Step().ok());
  CHECK(internal::SchedulerPeer::allocator(h->scheduler()).num_free() > free_before);
  // The engine saw `running`, so it is told to drop it.
  CHECK(h->last_plan().released == std::vector<RequestId>{running});
  for (RequestId id : {running, waiting, queued}) {
    CHECK(h->results().at(id).phase == RequestPhase::kCancelled);
    CHECK(h->scheduler().Cancel(id).code() == absl::StatusCode::kNotFound);
  }
  CHECK(h->live().empty());
}

TEST_CASE("Deadlines end requests as timed out wherever they are", "[scheduler]") {
  SchedulerOptions o;
  o.max_running = 1;
  auto h = Harness(o);
  RequestSpec s = Spec({.prompt = 8, .max_new = 1000});
  s.deadline = absl::UnixEpoch() + absl::Milliseconds(50);
  RequestId a = *h->Submit(s);
  RequestId b = *h->Submit(s);
  REQUIRE(h->RunUntilIdle().ok());
  for (RequestId id : {a, b}) {
    CHECK(h->results().at(id).phase == RequestPhase::kTimedOut);
    CHECK(std::string(h->results().at(id).message).find("deadline") != std::string::npos);
  }
  CHECK(h->results().at(a).output_tokens > 0);
  CHECK(h->results().at(b).output_tokens == 0);
}

TEST_CASE("Engine failures end sequences as failed with the message", "[scheduler]") {
  auto h = Harness(SchedulerOptions());
  RequestId id = *h->Submit(Spec({.prompt = 8, .max_new = 10}));
  h->executor().set_failure_rate(1.0);
  REQUIRE(h->Step().ok());
  const RequestResult& r = h->results().at(id);
  CHECK(r.phase == RequestPhase::kFailed);
  CHECK(r.message.find("injected failure") != std::string::npos);
}

class BrokenExecutor : public StepExecutor {
 public:
  absl::Status Execute(const StepPlan&, StepOutcome*) override {
    return absl::UnavailableError("device lost");
  }
};

TEST_CASE("EngineLoop fails every planned sequence when the step fails", "[scheduler]") {
  auto sched = *Scheduler::Create(SchedulerOptions());
  RequestId id = *sched->Submit(Spec({.prompt = 8, .max_new = 10}));
  BrokenExecutor broken;
  EngineLoop loop(*sched, broken);
  absl::Status s = loop.Step(absl::UnixEpoch());
  CHECK(s.code() == absl::StatusCode::kUnavailable);
  CHECK_FALSE(sched->plan_outstanding());
  std::vector<RequestResult> results;
  sched->DrainResults(&results);
  REQUIRE(results.size() == 1);
  CHECK(results[0].id == id);
  CHECK(results[0].phase == RequestPhase::kFailed);
  CHECK(results[0].message.find("device lost") != std::string::npos);
}

TEST_CASE("Stop tokens finish early, arrival time and TTFT are stamped", "[scheduler]") {
  auto h = Harness(SchedulerOptions());
  RequestSpec s = Spec({.prompt = 8, .max_new = 100});
  s.arrival_time = absl::UnixEpoch() - absl::Seconds(1);
  s.label = "hello";
  RequestId id = *h->Submit(s);
  h->executor().SetStopAfter(id, 5);
  REQUIRE(h->RunUntilIdle().ok());
  const RequestResult& r = h->results().at(id);
  CHECK(r.finish_reason == FinishReason::kStopToken);
  CHECK(r.output_tokens == 5);
  CHECK(r.label == "hello");
  CHECK(r.arrival_time == absl::UnixEpoch() - absl::Seconds(1));
  CHECK(r.first_token_time == absl::UnixEpoch());
  CHECK(r.end_time > r.first_token_time);
}

TEST_CASE("Requests with token ids expose their tokens to the engine", "[scheduler]") {
  SchedulerOptions o;
  o.max_prefill_chunk_tokens = 8;
  auto h = Harness(o);
  RequestSpec s = Spec({.prompt = 20, .max_new = 3});
  s.prompt_token_ids = Ids(20, 3);
  RequestId id = *h->Submit(s);
  h->keep_history(true);
  REQUIRE(h->RunUntilIdle().ok());
  std::vector<TokenId> seen;
  for (const auto& p : h->history()) {
    if (const auto* q = p.Find(id)) seen.insert(seen.end(), q->token_ids.begin(), q->token_ids.end());
  }
  // 20 prompt ids in chunks, then the two sampled tokens fed back as decodes.
  REQUIRE(seen.size() == 22);
  CHECK(std::equal(s.prompt_token_ids.begin(), s.prompt_token_ids.end(), seen.begin()));
  CHECK(seen[20] == testing::FakeExecutor::TokenFor(id, 20, 1000));
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

TEST_CASE("Long prompts admitted together never thrash each other", "[scheduler]") {
  // Two 30k-token prompts cannot both fit 54k tokens of KV. Admitted on
  // first-chunk room alone they would preempt each other round after round;
  // admission keeps room for each admitted prompt's whole prefill.
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 3400;
  o.max_batched_tokens = 2048;
  o.max_running = 64;
  o.max_prefill_chunk_tokens = 512;
  o.models[0].context_length = 32768;
  auto h = *testing::SchedulerHarness::Create(o);
  std::vector<RequestId> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(*h->Submit(Spec({.prompt = 30000, .max_new = 20})));
  REQUIRE(h->RunUntilIdle().ok());
  for (RequestId id : ids) {
    CHECK(h->results().at(id).phase == RequestPhase::kFinished);
    CHECK(h->results().at(id).preemptions == 0);
  }
  CHECK(h->scheduler().stats().preemptions == 0);
}

}  // namespace
}  // namespace hearth

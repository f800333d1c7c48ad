// Household work classes and per-user limits: caps and KV budgets (hard, or
// borrowing idle capacity that is reclaimed first), queue timeouts, retries
// of engine failures, per-user queue limits and token quotas.

#include <string>

#include <catch2/catch.hpp>

#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

std::unique_ptr<SchedulerHarness> Harness(SchedulerOptions o) {
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return std::move(*h);
}

int32_t RunningOfClass(SchedulerHarness& h, const std::vector<RequestId>& ids) {
  int32_t n = 0;
  for (RequestId id : ids) {
    auto v = h.scheduler().GetRequest(id);
    if (v.ok() && v->phase == RequestPhase::kRunning) ++n;
  }
  return n;
}

TEST_CASE("HouseholdWorkClasses is a valid configuration", "[scheduler][classes]") {
  SchedulerOptions o;
  o.work_classes = HouseholdWorkClasses();
  REQUIRE(o.work_classes.size() == 5);
  CHECK(o.work_classes[0].name == "voice");
  CHECK(o.work_classes[0].priority > o.work_classes[4].priority);
  CHECK(Scheduler::Create(o).ok());
}

TEST_CASE("A hard class cap is never exceeded", "[scheduler][classes]") {
  SchedulerOptions o;
  o.work_classes = {{.name = "batch", .max_running = 2, .borrow = false}, {.name = "chat"}};
  auto h = Harness(o);
  std::vector<RequestId> batch;
  for (int i = 0; i < 6; ++i) {
    batch.push_back(*h->Submit(Spec({.work_class = 0, .prompt = 8, .max_new = 20})));
  }
  RequestId chat = *h->Submit(Spec({.work_class = 1, .prompt = 8, .max_new = 20}));
  REQUIRE(h->Step().ok());
  // The cap held back batch work, not the chat request behind it.
  CHECK(h->last_plan().Find(chat) != nullptr);
  for (int step = 0; step < 10; ++step) {
    REQUIRE(h->Step().ok());
    CHECK(RunningOfClass(*h, batch) <= 2);
  }
  REQUIRE(h->RunUntilIdle().ok());
  for (RequestId id : batch) CHECK(h->results().at(id).phase == RequestPhase::kFinished);
}

TEST_CASE("A borrowing class uses idle slots and gives them back first", "[scheduler][classes]") {
  SchedulerOptions o;
  o.max_running = 4;
  o.work_classes = {{.name = "maintenance", .max_running = 1, .borrow = true},
                    {.name = "voice", .priority = 4, .max_running = 4}};
  auto h = Harness(o);
  std::vector<RequestId> maint;
  for (int i = 0; i < 4; ++i) {
    maint.push_back(*h->Submit(Spec({.work_class = 0, .prompt = 8, .max_new = 200})));
  }
  REQUIRE(h->Step().ok());
  // Nobody else wants the engine: maintenance borrows every slot.
  CHECK(RunningOfClass(*h, maint) == 4);
  RequestId voice = *h->Submit(Spec({.work_class = 1, .prompt = 8, .max_new = 5}));
  REQUIRE(h->Step().ok());
  // The voice request is entitled to a slot: a borrowed sequence yields.
  auto v = h->scheduler().GetRequest(voice);
  REQUIRE(v.ok());
  CHECK(v->phase == RequestPhase::kRunning);
  CHECK(RunningOfClass(*h, maint) == 3);
  CHECK(h->last_plan().preempted.size() == 1);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(voice).phase == RequestPhase::kFinished);
}

TEST_CASE("A hard KV budget bounds a class's blocks and rejects what cannot fit", "[scheduler][classes]") {
  SchedulerOptions o;
  o.kv.block_size = 4;
  o.kv.num_device_blocks = 64;
  o.work_classes = {{.name = "embedding", .kv_block_budget = 10, .borrow = false}};
  auto h = Harness(o);
  // 50 tokens > 40 the class may hold.
  auto too_big = h->Submit(Spec({.work_class = 0, .prompt = 30, .max_new = 20}));
  CHECK(too_big.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(too_big.status().message()).find("kv_block_budget") != std::string::npos);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(h->Submit(Spec({.work_class = 0, .prompt = 12, .max_new = 16})).ok());
  }
  // CheckInvariants (run by every Step) fails if the hard budget is exceeded.
  REQUIRE(h->RunUntilIdle().ok());
  for (const auto& [id, r] : h->results()) CHECK(r.phase == RequestPhase::kFinished);
}

TEST_CASE("Queue timeouts end requests never admitted", "[scheduler][classes]") {
  SchedulerOptions o;
  o.max_running = 1;
  o.work_classes = {{.name = "voice", .queue_timeout = absl::Milliseconds(35)}};
  auto h = Harness(o);
  RequestId first = *h->Submit(Spec({.work_class = 0, .prompt = 8, .max_new = 30}));
  RequestId second = *h->Submit(Spec({.work_class = 0, .prompt = 8, .max_new = 30}));
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(first).phase == RequestPhase::kFinished);  // Admitted in time.
  const RequestResult& late = h->results().at(second);
  CHECK(late.phase == RequestPhase::kTimedOut);
  CHECK(late.message.find("queue timeout") != std::string::npos);
  CHECK(late.end_time - late.arrival_time < absl::Milliseconds(60));
}

TEST_CASE("Engine failures are retried per class, then fail with the reason", "[scheduler][classes]") {
  SchedulerOptions o;
  o.work_classes = {{.name = "agent", .max_retries = 2}};
  auto h = Harness(o);
  RequestId id = *h->Submit(Spec({.work_class = 0, .prompt = 8, .max_new = 5}));
  h->executor().set_failure_rate(1.0);
  int drops = 0;
  for (int i = 0; i < 10 && h->results().count(id) == 0; ++i) {
    REQUIRE(h->Step().ok());
    drops += static_cast<int>(h->last_plan().preempted.size());
  }
  const RequestResult& r = h->results().at(id);
  CHECK(r.phase == RequestPhase::kFailed);
  CHECK(r.retries == 2);
  CHECK(r.message.find("3 times") != std::string::npos);
  CHECK(drops == 2);  // The engine was told to drop its state before each retry.

  // With failures gone, a retried request finishes normally.
  h->executor().set_failure_rate(0.0);
  RequestId ok = *h->Submit(Spec({.work_class = 0, .prompt = 8, .max_new = 5}));
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(ok).phase == RequestPhase::kFinished);
}

TEST_CASE("Per-user queue limits and token quotas return ResourceExhausted", "[scheduler][users]") {
  SchedulerOptions o;
  o.users = {{.name = "kid", .max_queued_requests = 2},
             {.name = "agent", .token_quota = 100, .quota_window = absl::Seconds(1)}};
  auto h = Harness(o);
  REQUIRE(h->Submit(Spec({.user = 0, .work_class = 0, .prompt = 8, .max_new = 8})).ok());
  REQUIRE(h->Submit(Spec({.user = 0, .work_class = 0, .prompt = 8, .max_new = 8})).ok());
  auto third = h->Submit(Spec({.user = 0, .work_class = 0, .prompt = 8, .max_new = 8}));
  CHECK(third.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(third.status().message()).find("max_queued_requests is 2") != std::string::npos);

  // 60 + 60 > 100: the second is refused until the first ends and refunds
  // what it did not generate.
  RequestSpec a = Spec({.user = 1, .work_class = 0, .prompt = 10, .max_new = 50});
  RequestId first = *h->Submit(a);
  h->executor().SetStopAfter(first, 5);
  auto over = h->Submit(a);
  CHECK(over.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(over.status().message()).find("100-token quota") != std::string::npos);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(first).output_tokens == 5);
  CHECK(h->Submit(a).ok());  // 15 used + 60 <= 100.
  // That request is taken in, and charged, by the first Plan of the next
  // window, which then has 40 tokens left.
  h->Advance(absl::Seconds(2));
  REQUIRE(h->Step().ok());
  CHECK(h->Submit(a).status().code() == absl::StatusCode::kResourceExhausted);
  // A window nothing was taken in by starts afresh.
  REQUIRE(h->RunUntilIdle().ok());
  h->Advance(absl::Seconds(2));
  REQUIRE(h->Step().ok());
  CHECK(h->Submit(a).ok());
}

}  // namespace
}  // namespace hearth

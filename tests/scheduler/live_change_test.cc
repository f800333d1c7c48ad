// Live changes (Scheduler::SetPriority / SetWorkClass): a queued request is
// taken in changed; any other is re-ranked by the policy at the next Plan,
// keeps its progress and KV, and takes its new class's targets, queue
// timeout, limits and budget. Every step runs under SchedulerHarness, whose
// invariant audit includes the per-class running counts and blocks.

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/policy_registry.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

constexpr uint32_t kChat = 0, kBatch = 1, kSlow = 2;

// chat: 1 s TTFT target, 200 ms queue timeout; batch: at most one running
// and 4 blocks, never borrowing; slow: no targets, no limits.
SchedulerOptions Options(int32_t max_running = 8) {
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 200;
  o.max_running = max_running;
  o.work_classes = {
      {.name = "chat",
       .priority = 2,
       .queue_timeout = absl::Milliseconds(200),
       .ttft_slo = absl::Seconds(1)},
      {.name = "batch", .max_running = 1, .kv_block_budget = 4, .borrow = false},
      {.name = "slow"},
  };
  return o;
}

std::unique_ptr<SchedulerHarness> Harness(SchedulerOptions o, const std::string& policy) {
  if (policy != "fifo") {
    PolicyConfig config;
    config.priority.aging_interval = absl::InfiniteDuration();
    absl::StatusOr<PolicyFactory> factory = MakePolicyFactory(policy, config);
    REQUIRE(factory.ok());
    o.policy_factory = *factory;
  }
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return std::move(*h);
}

RequestView View(SchedulerHarness& h, RequestId id) {
  absl::StatusOr<RequestView> v = h.scheduler().GetRequest(id);
  REQUIRE(v.ok());
  return *v;
}

bool Scheduled(const SchedulerHarness& h, RequestId id) {
  return h.last_plan().Find(id) != nullptr;
}

// "priority" ranks by class and request priority; "household" ranks classes
// by their TTFT targets (the request's own priority only picks a quota), so
// there the request is raised by moving it to chat.
TEST_CASE("A raised request is admitted first, under every policy that ranks by it",
          "[scheduler][live_change]") {
  for (const std::string policy : {"priority", "household"}) {
    INFO(policy);
    // One sequence at a time: the order of admission is the policy's order.
    auto h = Harness(Options(/*max_running=*/1), policy);
    const RequestId first = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 8}));
    REQUIRE(h->StepUntilDecoding(first).ok());
    const RequestId older = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 8}));
    const RequestId raised = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 8}));
    REQUIRE(h->Step().ok());
    if (policy == "priority") {
      REQUIRE(h->scheduler().SetPriority(raised, 5).ok());
    } else {
      REQUIRE(h->scheduler().SetWorkClass(raised, WorkClassId(kChat)).ok());
    }
    while (!Scheduled(*h, older) && !Scheduled(*h, raised)) REQUIRE(h->Step().ok());
    CHECK(Scheduled(*h, raised));
    CHECK_FALSE(Scheduled(*h, older));
    REQUIRE(h->RunUntilIdle().ok());
    CHECK(h->results().at(older).phase == RequestPhase::kFinished);
  }
}

TEST_CASE("A running request moved to another class keeps its progress and takes the "
          "class's targets", "[scheduler][live_change]") {
  for (const std::string policy : {"fifo", "vtc", "priority", "mlfq", "household"}) {
    INFO(policy);
    auto h = Harness(Options(), policy);
    RequestSpec own = Spec({.work_class = kSlow, .prompt = 64, .max_new = 40});
    own.tpot_slo = absl::Milliseconds(70);
    const RequestId id = *h->Submit(own);
    REQUIRE(h->StepUntilDecoding(id).ok());
    const RequestView before = View(*h, id);
    CHECK(before.ttft_slo == absl::InfiniteDuration());
    REQUIRE(h->scheduler().SetWorkClass(id, WorkClassId(kChat)).ok());
    REQUIRE(h->Step().ok());
    const RequestView after = View(*h, id);
    CHECK(after.work_class == WorkClassId(kChat));
    CHECK(after.phase == RequestPhase::kRunning);
    CHECK(after.computed_tokens > before.computed_tokens);
    CHECK(after.ttft_slo == absl::Seconds(1));
    // Its own TPOT target stays.
    CHECK(after.tpot_slo == absl::Milliseconds(70));
    CHECK(h->last_plan().preempted.empty());
    // Admitted long ago: the chat queue timeout no longer applies.
    h->Advance(absl::Seconds(1));
    REQUIRE(h->RunUntilIdle().ok());
    CHECK(h->results().at(id).phase == RequestPhase::kFinished);
    CHECK(h->results().at(id).preemptions == 0);
  }
}

TEST_CASE("A running request moved into a full class that may not borrow waits there",
          "[scheduler][live_change]") {
  for (const std::string policy : {"fifo", "vtc", "priority", "mlfq", "household"}) {
    INFO(policy);
    auto h = Harness(Options(), policy);
    const RequestId batch = *h->Submit(Spec({.work_class = kBatch, .prompt = 32, .max_new = 30}));
    const RequestId moved = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 30}));
    REQUIRE(h->StepUntilDecoding(batch).ok());
    REQUIRE(h->StepUntilDecoding(moved).ok());
    REQUIRE(h->scheduler().SetWorkClass(moved, WorkClassId(kBatch)).ok());
    REQUIRE(h->Step().ok());
    // The class runs one at a time: the newcomer yields, not the runner.
    bool preempted = false;
    for (const auto& p : h->last_plan().preempted) preempted = preempted || p.id == moved;
    CHECK(preempted);
    CHECK(View(*h, moved).phase == RequestPhase::kWaiting);
    CHECK(View(*h, batch).phase == RequestPhase::kRunning);
    while (h->live().contains(batch)) {
      CHECK_FALSE(Scheduled(*h, moved));
      REQUIRE(h->Step().ok());
    }
    REQUIRE(h->RunUntilIdle().ok());
    CHECK(h->results().at(moved).phase == RequestPhase::kFinished);
    CHECK(h->results().at(moved).preemptions == 1);
  }
}

TEST_CASE("A queued request is taken in with its changes", "[scheduler][live_change]") {
  auto h = Harness(Options(), "household");
  const RequestId id = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 8}));
  REQUIRE(h->scheduler().SetWorkClass(id, WorkClassId(kChat)).ok());
  REQUIRE(h->scheduler().SetPriority(id, 3).ok());
  REQUIRE(h->scheduler().SetPriority(id, 4).ok());
  CHECK(View(*h, id).phase == RequestPhase::kQueued);
  REQUIRE(h->Step().ok());
  const RequestView v = View(*h, id);
  CHECK(v.work_class == WorkClassId(kChat));
  CHECK(v.priority == 4);
  CHECK(v.ttft_slo == absl::Seconds(1));
  CHECK(v.ttft_deadline == v.arrival_time + absl::Seconds(1));
}

TEST_CASE("Changes made between two Plans merge, the latest of each winning",
          "[scheduler][live_change]") {
  auto h = Harness(Options(/*max_running=*/1), "priority");
  const RequestId runner = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 8}));
  REQUIRE(h->StepUntilDecoding(runner).ok());
  const RequestId id = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  for (int p = 0; p < 1000; ++p) REQUIRE(h->scheduler().SetPriority(id, p % 7).ok());
  REQUIRE(h->scheduler().SetWorkClass(id, WorkClassId(kBatch)).ok());
  REQUIRE(h->scheduler().SetWorkClass(id, WorkClassId(kChat)).ok());
  REQUIRE(h->Step().ok());
  const RequestView v = View(*h, id);
  CHECK(v.priority == 999 % 7);
  CHECK(v.work_class == WorkClassId(kChat));
}

TEST_CASE("A waiting request moved to a class with a queue timeout times out by it",
          "[scheduler][live_change]") {
  auto h = Harness(Options(/*max_running=*/1), "fifo");
  const RequestId runner = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 200}));
  REQUIRE(h->StepUntilDecoding(runner).ok());
  const RequestId waiting = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 8}));
  REQUIRE(h->Step().ok());
  REQUIRE(h->scheduler().SetWorkClass(waiting, WorkClassId(kChat)).ok());
  h->Advance(absl::Milliseconds(250));
  REQUIRE(h->Step().ok());
  REQUIRE(h->results().contains(waiting));
  const RequestResult& r = h->results().at(waiting);
  CHECK(r.phase == RequestPhase::kTimedOut);
  CHECK_THAT(r.message, Catch::Contains("class \"chat\" has a queue timeout"));
}

// A class change swaps R out; a cancel in the same Plan ends it. Its host
// blocks must stay taken until the step ran: another swap-out of the same
// plan would otherwise copy into them too.
TEST_CASE("A request swapped out by a class change and cancelled in the same Plan keeps "
          "its host blocks until the step ran", "[scheduler][live_change]") {
  SchedulerOptions o;
  o.kv.block_size = 4;
  o.kv.num_device_blocks = 5;
  o.kv.num_host_blocks = 16;
  o.kv.watermark_blocks = 0;
  o.kv.growth_headroom_tokens = 0;
  o.max_batched_tokens = 64;
  o.max_running = 8;
  o.preemption_mode = PreemptionMode::kSwap;
  o.swap_block_cost_tokens = 1.0;
  o.work_classes = {{.name = "a"}, {.name = "b", .max_running = 1, .borrow = false}};
  auto h = Harness(o, "fifo");
  RequestSpec spec = Spec({.work_class = 0, .prompt = 4, .max_new = 10});
  REQUIRE(h->Submit(Spec({.work_class = 1, .prompt = 4, .max_new = 10})).ok());
  const RequestId r = *h->Submit(spec);
  REQUIRE(h->Submit(spec).ok());
  REQUIRE(h->Submit(spec).ok());
  REQUIRE(h->Step().ok());
  REQUIRE(h->scheduler().SetWorkClass(r, WorkClassId(1)).ok());
  REQUIRE(h->scheduler().Cancel(r).ok());
  // The harness's plan checks fail a plan whose copies write one target twice.
  REQUIRE(h->Step().ok());
  std::vector<uint32_t> targets;
  for (const BlockCopy& c : h->last_plan().swap_out) targets.push_back(c.target.value());
  std::sort(targets.begin(), targets.end());
  CHECK(std::adjacent_find(targets.begin(), targets.end()) == targets.end());
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(r).phase == RequestPhase::kCancelled);
}

TEST_CASE("Live changes refuse what they cannot change, and say why",
          "[scheduler][live_change]") {
  auto h = Harness(Options(), "household");
  Scheduler& s = h->scheduler();
  CHECK(s.SetPriority(RequestId(12345), 1).code() == absl::StatusCode::kNotFound);
  const RequestId id = *h->Submit(Spec({.work_class = kSlow, .prompt = 8, .max_new = 2}));
  for (WorkClassId bad : {WorkClassId(3), WorkClassId(), WorkClassId(UINT32_MAX - 1)}) {
    const absl::Status status = s.SetWorkClass(id, bad);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()), Catch::Contains("SchedulerOptions.work_classes has 3"));
  }
  // Batch may never hold more than 4 blocks of 16 tokens.
  const RequestId big = *h->Submit(Spec({.work_class = kSlow, .prompt = 60, .max_new = 20}));
  const absl::Status too_big = s.SetWorkClass(big, WorkClassId(kBatch));
  CHECK(too_big.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(too_big.message()),
             Catch::Contains("may hold 80 tokens (prompt_tokens + max_new_tokens), more than "
                             "class \"batch\" may ever hold (a hard kv_block_budget of 4 blocks"));
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(big).phase == RequestPhase::kFinished);
  const absl::Status ended = s.SetPriority(id, 1);
  CHECK(ended.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(ended.message()), Catch::Contains("unknown or already ended"));
  const RequestId cancelled = *h->Submit(Spec({.work_class = kSlow, .prompt = 32, .max_new = 8}));
  REQUIRE(s.Cancel(cancelled).ok());
  CHECK_THAT(std::string(s.SetWorkClass(cancelled, WorkClassId(kChat)).message()),
             Catch::Contains("being cancelled"));
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(cancelled).phase == RequestPhase::kCancelled);
}

}  // namespace
}  // namespace hearth

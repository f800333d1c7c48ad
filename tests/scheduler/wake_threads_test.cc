// The idle engine sleeps in WaitForWork and is woken by host threads'
// Submit, Cancel and Wake; a metrics thread reads PublishedStats meanwhile.
// Run under TSan in CI (tag [threads]). No timing: every wait is for work
// that some thread is sure to provide.

#include <atomic>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/scheduler/scheduler.h"
#include "tests/testing/fake_executor.h"

namespace hearth {
namespace {

TEST_CASE("An idle engine sleeps until Submit, Cancel or Wake, stats are read from any thread",
          "[scheduler][threads]") {
  SchedulerOptions o;
  o.kv.num_device_blocks = 128;
  o.max_batched_tokens = 128;
  o.max_running = 64;  // at most max_batched_tokens (every sequence decodes each step)
  auto sched = *Scheduler::Create(o);
  constexpr int kRequests = 200;
  std::atomic<bool> hosts_done{false};
  std::atomic<bool> engine_done{false};
  std::atomic<int> bad_reads{0};

  std::thread host([&] {
    for (int i = 0; i < kRequests; ++i) {
      RequestSpec s;
      s.prompt_tokens = 1 + i % 24;
      s.max_new_tokens = 1 + i % 5;
      s.handle = static_cast<uint64_t>(i) + 1000;
      absl::StatusOr<RequestId> id = sched->Submit(s);
      if (id.ok() && i % 7 == 0) (void)sched->Cancel(*id, "changed my mind");
      if (i % 3 == 0) std::this_thread::yield();
    }
    hosts_done.store(true);
    sched->Wake();  // The engine may be asleep with nothing left to come.
  });
  std::thread metrics([&] {
    uint64_t steps = 0, finished = 0;
    while (!engine_done.load()) {
      const SchedulerStats s = sched->PublishedStats();
      // A torn copy would show counters going backwards or apart.
      if (s.steps < steps || s.finished < finished ||
          s.free_device_blocks + s.cached_device_blocks > 128) {
        ++bad_reads;
      }
      steps = s.steps;
      finished = s.finished;
      std::this_thread::yield();
    }
  });

  testing::FakeExecutor executor;
  StepOutcome outcome;
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  while (!(hosts_done.load() && static_cast<int>(results.size()) == kRequests)) {
    // Only Submit, Cancel and Wake end this wait: no timer is ever due here.
    sched->WaitForWork(sched->NextEventTime() - now);
    now += absl::Milliseconds(1);
    const StepPlan* plan = *sched->Plan(now);
    REQUIRE(executor.Execute(*plan, &outcome).ok());
    REQUIRE(sched->Complete(outcome).ok());
    sched->DrainResults(&results);
  }
  engine_done.store(true);
  host.join();
  metrics.join();
  CHECK(bad_reads.load() == 0);
  REQUIRE(results.size() == kRequests);
  std::vector<int> seen(kRequests, 0);
  for (const RequestResult& r : results) {
    REQUIRE(r.handle >= 1000);
    REQUIRE(r.handle < 1000 + kRequests);
    ++seen[r.handle - 1000];
  }
  for (int n : seen) CHECK(n == 1);
  CHECK(sched->PublishedStats().finished == sched->stats().finished);
  CHECK(sched->CheckInvariants().ok());
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

// One host submits held requests, another releases (or cancels) them while
// the engine sleeps and plans: every request ends exactly once, and the
// engine, asleep with only held requests, is woken by each Release.
TEST_CASE("Held requests released from other threads wake the engine and end once",
          "[scheduler][threads]") {
  SchedulerOptions o;
  o.kv.num_device_blocks = 128;
  o.max_batched_tokens = 128;
  o.max_running = 32;
  auto sched = *Scheduler::Create(o);
  constexpr int kRequests = 120;
  std::vector<std::atomic<uint64_t>> ids(kRequests);
  std::atomic<int> submitted{0};
  std::thread host([&] {
    for (int i = 0; i < kRequests; ++i) {
      RequestSpec s;
      s.prompt_tokens = 1 + i % 20;
      s.max_new_tokens = 1 + i % 4;
      s.handle = static_cast<uint64_t>(i);
      s.hold = true;
      ids[i].store(sched->Submit(s)->value());
      submitted.store(i + 1);
    }
  });
  std::atomic<int> refused{0};
  std::thread releaser([&] {
    for (int i = 0; i < kRequests; ++i) {
      while (submitted.load() <= i) std::this_thread::yield();
      const RequestId id(ids[i].load());
      const absl::Status s = i % 9 == 0 ? sched->Cancel(id) : sched->Release(id);
      if (!s.ok()) ++refused;
    }
  });
  testing::FakeExecutor executor;
  StepOutcome outcome;
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  while (static_cast<int>(results.size()) < kRequests) {
    // No timers: only Submit, Release and Cancel end this wait.
    sched->WaitForWork(sched->NextEventTime() - now);
    now += absl::Milliseconds(1);
    const StepPlan* plan = *sched->Plan(now);
    REQUIRE(executor.Execute(*plan, &outcome).ok());
    REQUIRE(sched->Complete(outcome).ok());
    sched->DrainResults(&results);
  }
  host.join();
  releaser.join();
  CHECK(refused.load() == 0);
  std::vector<int> seen(kRequests, 0);
  int cancelled = 0;
  for (const RequestResult& r : results) {
    REQUIRE(r.handle < kRequests);
    ++seen[r.handle];
    cancelled += r.phase == RequestPhase::kCancelled;
  }
  for (int n : seen) CHECK(n == 1);
  CHECK(cancelled == (kRequests + 8) / 9);
  CHECK(sched->stats().held == 0);
  CHECK(sched->CheckInvariants().ok());
}

}  // namespace
}  // namespace hearth

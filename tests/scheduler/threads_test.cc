// Several host threads Submit, Cancel and change priorities and classes
// while the engine thread runs Plan/Complete under the household policy. Run
// under TSan in CI (tag [threads]).

#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/policy_registry.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/fake_executor.h"
#include "scheduler/scheduler_peer.h"

namespace hearth {
namespace {

TEST_CASE("Concurrent Submit, Cancel and live changes while the engine runs",
          "[scheduler][threads]") {
  SchedulerOptions o;
  o.kv.num_device_blocks = 256;
  o.max_running = 16;
  o.max_batched_tokens = 256;
  o.users = {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}};
  o.work_classes = HouseholdWorkClasses();
  o.policy_factory = *MakePolicyFactory("household", PolicyConfig{});
  const auto num_classes = static_cast<uint32_t>(o.work_classes.size());
  auto sched = *Scheduler::Create(o);
  constexpr int kThreads = 4, kPerThread = 150;
  std::atomic<int> done_threads{0};
  std::atomic<int> bad_cancels{0};
  std::atomic<int> bad_changes{0};
  std::mutex mu;  // Not absl::Mutex: see src/scheduler/inbox.h.
  std::vector<RequestId> accepted;

  std::vector<std::thread> hosts;
  for (int t = 0; t < kThreads; ++t) {
    hosts.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(t) + 1);
      std::vector<RequestId> mine;
      for (int i = 0; i < kPerThread; ++i) {
        RequestSpec s;
        s.user = UserId(static_cast<uint32_t>(t));
        s.prompt_tokens = 1 + static_cast<int32_t>(rng() % 64);
        s.max_new_tokens = 1 + static_cast<int32_t>(rng() % 16);
        s.work_class = WorkClassId(static_cast<uint32_t>(rng() % num_classes));
        auto id = sched->Submit(s);
        if (id.ok()) mine.push_back(*id);
        if (!mine.empty() && rng() % 3 == 0) {
          const RequestId some = mine[rng() % mine.size()];
          absl::Status c =
              rng() % 2 == 0
                  ? sched->SetPriority(some, static_cast<int32_t>(rng() % 5) - 2)
                  : sched->SetWorkClass(some, WorkClassId(static_cast<uint32_t>(rng() % num_classes)));
          if (!c.ok() && c.code() != absl::StatusCode::kNotFound) ++bad_changes;
        }
        if (!mine.empty() && rng() % 4 == 0) {
          absl::Status c = sched->Cancel(mine[rng() % mine.size()]);
          // Catch2 assertions are not thread-safe: count, check after join.
          if (!c.ok() && c.code() != absl::StatusCode::kNotFound) ++bad_cancels;
        }
        if (rng() % 8 == 0) std::this_thread::yield();
      }
      std::lock_guard<std::mutex> lock(mu);
      accepted.insert(accepted.end(), mine.begin(), mine.end());
      ++done_threads;
    });
  }

  testing::FakeExecutor executor;
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  StepOutcome outcome;
  // Runs until the hosts are done and every accepted request has ended. The
  // idle-step bound only stops a broken scheduler from hanging the test.
  int idle_steps_after_hosts = 0;
  while (idle_steps_after_hosts < 1000000) {
    auto plan = sched->Plan(now);
    REQUIRE(plan.ok());
    REQUIRE(executor.Execute(**plan, &outcome).ok());
    REQUIRE(sched->Complete(outcome).ok());
    now += absl::Milliseconds(1);
    sched->DrainResults(&results);
    if (done_threads.load() == kThreads) {
      ++idle_steps_after_hosts;
      std::lock_guard<std::mutex> lock(mu);
      if (results.size() == accepted.size()) break;
    }
  }
  for (std::thread& t : hosts) t.join();
  CHECK(bad_cancels.load() == 0);
  CHECK(bad_changes.load() == 0);
  REQUIRE(sched->CheckInvariants().ok());
  std::lock_guard<std::mutex> lock(mu);
  const SchedulerStats st = sched->stats();
  INFO("waiting " << st.waiting << " running " << st.running << " queued " << st.queued
       << " free blocks " << st.free_device_blocks);
  REQUIRE(results.size() == accepted.size());
  std::sort(accepted.begin(), accepted.end());
  std::vector<RequestId> ended;
  for (const RequestResult& r : results) ended.push_back(r.id);
  std::sort(ended.begin(), ended.end());
  CHECK(ended == accepted);  // Each exactly once.
  CHECK(internal::SchedulerPeer::allocator(*sched).num_owned() == 0);
}

}  // namespace
}  // namespace hearth

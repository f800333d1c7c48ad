// JobPool on real threads. Pass or fail never depends on timing: every wait
// is for an event (a notification, a count), and the timed cases run on a
// locked manual clock that only the test moves. Tagged [threads]: CI runs
// them under TSan.

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <memory>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "hearth/jobs/job_pool.h"

namespace hearth {
namespace {

// A manual clock several threads may read while the test moves it.
class LockedClock : public Clock {
 public:
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ = absl::UnixEpoch();
};

// Counts what runs at once, keeping the highest count seen.
class Gauge {
 public:
  void Enter() {
    const int now = ++current_;
    int seen = max_.load();
    while (now > seen && !max_.compare_exchange_weak(seen, now)) {
    }
  }
  void Leave() { --current_; }
  int max() const { return max_.load(); }

 private:
  std::atomic<int> current_{0};
  std::atomic<int> max_{0};
};

// Counts each job's on_end calls and wakes a waiter when all have come.
class EndLedger {
 public:
  JobEndCallback Callback() {
    return [this](const JobResult& r) {
      absl::MutexLock lock(&mu_);
      ++ends_[r.id.value()];
      ++by_state_[static_cast<int>(r.end)];
      ++total_;
    };
  }
  void AwaitTotal(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return total_ >= n; };
    mu_.Await(absl::Condition(&reached));
  }
  int ends(JobId id) {
    absl::MutexLock lock(&mu_);
    auto it = ends_.find(id.value());
    return it == ends_.end() ? 0 : it->second;
  }
  int count(JobEnd end) {
    absl::MutexLock lock(&mu_);
    return by_state_[static_cast<int>(end)];
  }

 private:
  absl::Mutex mu_;
  std::map<uint64_t, int> ends_ ABSL_GUARDED_BY(mu_);
  int by_state_[kNumJobEnds] ABSL_GUARDED_BY(mu_) = {};
  int total_ ABSL_GUARDED_BY(mu_) = 0;
};

JobPoolOptions TwoQueues() {
  JobPoolOptions o;
  JobQueueOptions disk;
  disk.name = "disk";
  disk.max_concurrency = 3;
  disk.concurrency_under_demand = 0;
  disk.max_io_depth = 1;
  disk.jobs_use_io = true;
  disk.retry = {.max_retries = 2, .initial_backoff = absl::Milliseconds(1),
                .max_backoff = absl::Milliseconds(2)};
  JobQueueOptions cpu;
  cpu.name = "cpu";
  cpu.kind = JobQueueKind::kInteractive;
  cpu.max_concurrency = 2;
  o.queues = {disk, cpu};
  o.worker_slots = 4;
  return o;
}

TEST_CASE("threads submitting, cancelling and steering never break a limit or an end",
          "[threads][jobs]") {
  auto pool = *JobPool::Create(TwoQueues());
  Gauge disk, disk_io, cpu, all;
  EndLedger ledger;
  absl::Mutex ids_mu;
  std::vector<JobId> ids;
  constexpr int kSubmitters = 3;
  constexpr int kPerSubmitter = 120;
  std::vector<std::thread> threads;
  for (int t = 0; t < kSubmitters; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerSubmitter; ++i) {
        const bool on_disk = (i + t) % 2 == 0;
        Gauge& queue = on_disk ? disk : cpu;
        auto work = [&, on_disk, i](const JobContext& ctx) {
          all.Enter();
          queue.Enter();
          if (on_disk) disk_io.Enter();
          for (int spin = 0; spin < 50 && !ctx.stop_requested(); ++spin) std::this_thread::yield();
          if (on_disk) disk_io.Leave();
          queue.Leave();
          all.Leave();
          return i % 7 == 0 && ctx.attempt() == 1 ? absl::UnavailableError("flaky disk")
                                                  : absl::OkStatus();
        };
        absl::StatusOr<JobId> id =
            pool->Submit(JobSpec{.queue = on_disk ? "disk" : "cpu"}, work, ledger.Callback());
        REQUIRE(id.ok());
        absl::MutexLock lock(&ids_mu);
        ids.push_back(*id);
      }
    });
  }
  threads.emplace_back([&] {  // cancels whatever was submitted recently
    for (int i = 0; i < 60; ++i) {
      JobId victim;
      {
        absl::MutexLock lock(&ids_mu);
        if (!ids.empty()) victim = ids[ids.size() / 2];
      }
      if (victim.valid()) (void)pool->Cancel(victim);  // NotFound when it ended first
      std::this_thread::yield();
    }
  });
  threads.emplace_back([&] {  // the engine thread steering give-back
    for (int i = 0; i < 60; ++i) {
      REQUIRE(pool->SetInteractiveDemand({.interactive_backlog = i % 3 == 0 ? 50 : 0}).ok());
      REQUIRE((i % 5 == 0 ? pool->Pause("disk") : pool->Resume("disk")).ok());
      (void)pool->Stats();
      std::this_thread::yield();
    }
    REQUIRE(pool->SetInteractiveDemand({}).ok());
    REQUIRE(pool->Resume("disk").ok());
  });
  for (std::thread& t : threads) t.join();
  ledger.AwaitTotal(kSubmitters * kPerSubmitter);
  const JobPoolStats stats = pool->Stats();
  pool.reset();

  for (const JobId id : ids) REQUIRE(ledger.ends(id) == 1);
  // The cpu queue does not retry, so its flaky first attempts fail.
  REQUIRE(ledger.count(JobEnd::kDone) + ledger.count(JobEnd::kCancelled) +
              ledger.count(JobEnd::kFailed) ==
          kSubmitters * kPerSubmitter);
  REQUIRE(disk.max() <= 3);
  REQUIRE(disk_io.max() <= 1);
  REQUIRE(cpu.max() <= 2);
  REQUIRE(all.max() <= 4);
  // The pool's counters agree with what was delivered.
  uint64_t counted = 0;
  for (const JobQueueStats& q : stats.queues) {
    for (uint64_t n : q.ended) counted += n;
  }
  REQUIRE(counted == kSubmitters * kPerSubmitter);
}

TEST_CASE("cancelling a running job ends it once, on the cancelling thread, and stops it",
          "[threads][jobs]") {
  auto pool = *JobPool::Create(TwoQueues());
  absl::Notification started, saw_stop;
  std::atomic<int> ends{0};
  std::atomic<bool> ended_before_cancel_returned{false};
  const JobId id = *pool->Submit(
      JobSpec{.queue = "cpu"},
      [&](const JobContext& ctx) {
        started.Notify();
        while (!ctx.stop_requested()) absl::SleepFor(absl::Microseconds(100));
        saw_stop.Notify();
        return absl::CancelledError("stopped");
      },
      [&](const JobResult& r) {
        REQUIRE(r.end == JobEnd::kCancelled);
        ++ends;
      });
  started.WaitForNotification();
  REQUIRE(pool->Cancel(id).ok());
  ended_before_cancel_returned = ends.load() == 1;
  saw_stop.WaitForNotification();
  REQUIRE(pool->Cancel(id).code() == absl::StatusCode::kNotFound);
  pool.reset();
  REQUIRE(ended_before_cancel_returned);
  REQUIRE(ends == 1);
}

TEST_CASE("a run timeout on a manual clock stops the work and ends the job timed out",
          "[threads][jobs]") {
  LockedClock clock;
  auto pool = *JobPool::Create(TwoQueues(), &clock);
  absl::Notification started, ended;
  JobResult result;
  JobSpec spec{.queue = "cpu"};
  spec.run_timeout = absl::Seconds(10);
  (void)*pool->Submit(
      spec,
      [&](const JobContext& ctx) {
        started.Notify();
        while (!ctx.stop_requested()) absl::SleepFor(absl::Microseconds(100));
        return absl::OkStatus();
      },
      [&](const JobResult& r) {
        result = r;
        ended.Notify();
      });
  started.WaitForNotification();
  clock.Advance(absl::Seconds(9));
  pool->Tick();
  REQUIRE_FALSE(ended.HasBeenNotified());
  clock.Advance(absl::Seconds(1));
  pool->Tick();
  ended.WaitForNotification();
  REQUIRE(result.end == JobEnd::kTimedOut);
  REQUIRE(result.status.code() == absl::StatusCode::kDeadlineExceeded);
}

TEST_CASE("destroying the pool rejects waiting jobs and waits for running ones",
          "[threads][jobs]") {
  JobPoolOptions o = TwoQueues();
  o.queues[0].start_paused = true;
  auto pool = *JobPool::Create(o);
  EndLedger ledger;
  absl::Notification started;
  std::atomic<bool> returned{false};
  const JobId running = *pool->Submit(
      JobSpec{.queue = "cpu"},
      [&](const JobContext& ctx) {
        started.Notify();
        while (!ctx.stop_requested()) absl::SleepFor(absl::Microseconds(100));
        returned = true;
        return absl::OkStatus();  // finished its chunk cleanly: done
      },
      ledger.Callback());
  std::vector<JobId> waiting;
  for (int i = 0; i < 5; ++i) {
    waiting.push_back(*pool->Submit(JobSpec{.queue = "disk"},
                                    [](const JobContext&) { return absl::OkStatus(); },
                                    ledger.Callback()));
  }
  started.WaitForNotification();
  pool.reset();
  REQUIRE(returned);
  REQUIRE(ledger.ends(running) == 1);
  REQUIRE(ledger.count(JobEnd::kDone) == 1);
  REQUIRE(ledger.count(JobEnd::kRejected) == 5);
  for (const JobId id : waiting) REQUIRE(ledger.ends(id) == 1);
}

TEST_CASE("on_end may submit follow-up work, and throwing work fails its job",
          "[threads][jobs]") {
  auto pool = *JobPool::Create(TwoQueues());
  absl::Notification chain_done;
  std::atomic<int> links{0};
  std::function<void(const JobResult&)> next = [&](const JobResult& r) {
    REQUIRE(r.end == JobEnd::kDone);
    if (++links == 20) {
      chain_done.Notify();
      return;
    }
    REQUIRE(pool->Submit(JobSpec{.queue = "cpu"},
                         [](const JobContext&) { return absl::OkStatus(); }, next)
                .ok());
  };
  REQUIRE(pool->Submit(JobSpec{.queue = "cpu"},
                       [](const JobContext&) { return absl::OkStatus(); }, next)
              .ok());
  chain_done.WaitForNotification();

  absl::Notification thrown;
  JobResult result;
  JobSpec spec{.queue = "cpu"};
  spec.max_retries = 0;
  REQUIRE(pool->Submit(
                  spec, [](const JobContext&) -> absl::Status { throw std::runtime_error("boom"); },
                  [&](const JobResult& r) {
                    result = r;
                    thrown.Notify();
                  })
              .ok());
  thrown.WaitForNotification();
  REQUIRE(result.end == JobEnd::kFailed);
  REQUIRE_THAT(std::string(result.status.message()), Catch::Contains("boom"));
}

}  // namespace
}  // namespace hearth

// JobPool on real threads. Pass or fail never depends on timing: every wait
// is for an event (a notification, a count), and the timed cases run on a
// locked manual clock that only the test moves. Tagged [threads]: CI runs
// them under TSan.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <memory>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/jobs/job_pool.h"

namespace hearth {
namespace {

// std:: primitives, not absl::Mutex or absl::Notification: Debian's prebuilt
// Abseil carries no ThreadSanitizer annotations (see src/scheduler/inbox.h).
class Notification {
 public:
  // Notifies under the lock, so that a waiter cannot return (and destroy
  // this) while notify_all still runs.
  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    notified_ = true;
    cv_.notify_all();
  }
  bool HasBeenNotified() {
    std::lock_guard<std::mutex> lock(mu_);
    return notified_;
  }
  void WaitForNotification() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return notified_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool notified_ = false;
};

// A manual clock several threads may read while the test moves it.
class LockedClock : public Clock {
 public:
  absl::Time Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }

 private:
  mutable std::mutex mu_;
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
      std::lock_guard<std::mutex> lock(mu_);
      ++ends_[r.id.value()];
      ++by_state_[static_cast<int>(r.end)];
      ++total_;
      cv_.notify_all();
    };
  }
  void AwaitTotal(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this, n] { return total_ >= n; });
  }
  int ends(JobId id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ends_.find(id.value());
    return it == ends_.end() ? 0 : it->second;
  }
  int count(JobEnd end) {
    std::lock_guard<std::mutex> lock(mu_);
    return by_state_[static_cast<int>(end)];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, int> ends_;
  int by_state_[kNumJobEnds] = {};
  int total_ = 0;
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
  std::atomic<int> failures{0};
  std::mutex ids_mu;
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
        if (!id.ok()) {
          ++failures;  // Catch2's REQUIRE belongs to the main thread
          continue;
        }
        std::lock_guard<std::mutex> lock(ids_mu);
        ids.push_back(*id);
      }
    });
  }
  threads.emplace_back([&] {  // cancels whatever was submitted recently
    for (int i = 0; i < 60; ++i) {
      JobId victim;
      {
        std::lock_guard<std::mutex> lock(ids_mu);
        if (!ids.empty()) victim = ids[ids.size() / 2];
      }
      if (victim.valid()) (void)pool->Cancel(victim);  // NotFound when it ended first
      std::this_thread::yield();
    }
  });
  threads.emplace_back([&] {  // the engine thread steering give-back
    for (int i = 0; i < 60; ++i) {
      failures += !pool->SetInteractiveDemand({.interactive_backlog = i % 3 == 0 ? 50 : 0}).ok();
      failures += !(i % 5 == 0 ? pool->Pause("disk") : pool->Resume("disk")).ok();
      (void)pool->Stats();
      std::this_thread::yield();
    }
    failures += !pool->SetInteractiveDemand({}).ok();
    failures += !pool->Resume("disk").ok();
  });
  for (std::thread& t : threads) t.join();
  ledger.AwaitTotal(kSubmitters * kPerSubmitter);
  const JobPoolStats stats = pool->Stats();
  pool.reset();

  REQUIRE(failures == 0);
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
  Notification started, saw_stop;
  std::atomic<int> ends{0};
  std::atomic<bool> ended_before_cancel_returned{false};
  const JobId id = *pool->Submit(
      JobSpec{.queue = "cpu"},
      [&](const JobContext& ctx) {
        started.Notify();
        while (!ctx.stop_requested()) std::this_thread::sleep_for(std::chrono::microseconds(100));
        saw_stop.Notify();
        return absl::CancelledError("stopped");
      },
      [&](const JobResult& r) {
        if (r.end == JobEnd::kCancelled) ++ends;
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
  Notification started, ended;
  JobResult result;
  JobSpec spec{.queue = "cpu"};
  spec.run_timeout = absl::Seconds(10);
  (void)*pool->Submit(
      spec,
      [&](const JobContext& ctx) {
        started.Notify();
        while (!ctx.stop_requested()) std::this_thread::sleep_for(std::chrono::microseconds(100));
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
  // The work and callbacks use this test's locals: the pool goes first.
  pool.reset();
  REQUIRE(result.end == JobEnd::kTimedOut);
  REQUIRE(result.status.code() == absl::StatusCode::kDeadlineExceeded);
}

TEST_CASE("destroying the pool rejects waiting jobs and waits for running ones",
          "[threads][jobs]") {
  JobPoolOptions o = TwoQueues();
  o.queues[0].start_paused = true;
  auto pool = *JobPool::Create(o);
  EndLedger ledger;
  Notification started;
  std::atomic<bool> returned{false};
  const JobId running = *pool->Submit(
      JobSpec{.queue = "cpu"},
      [&](const JobContext& ctx) {
        started.Notify();
        while (!ctx.stop_requested()) std::this_thread::sleep_for(std::chrono::microseconds(100));
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
  Notification chain_done;
  std::atomic<int> links{0};
  std::atomic<int> failures{0};
  // Runs on worker threads: failures are counted, and checked on this one.
  std::function<void(const JobResult&)> next = [&](const JobResult& r) {
    failures += r.end != JobEnd::kDone;
    if (++links == 20) {
      chain_done.Notify();
      return;
    }
    failures += !pool->Submit(JobSpec{.queue = "cpu"},
                              [](const JobContext&) { return absl::OkStatus(); }, next)
                     .ok();
  };
  REQUIRE(pool->Submit(JobSpec{.queue = "cpu"},
                       [](const JobContext&) { return absl::OkStatus(); }, next)
              .ok());
  chain_done.WaitForNotification();
  REQUIRE(failures == 0);

  Notification thrown;
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
  pool.reset();
  REQUIRE(result.end == JobEnd::kFailed);
  REQUIRE_THAT(std::string(result.status.message()), Catch::Contains("boom"));
}

}  // namespace
}  // namespace hearth

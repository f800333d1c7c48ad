#include "hearth/jobs/job_pool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hearth/jobs/job_planner.h"
#include "internal/status_macros.h"

namespace hearth {
namespace {

using StopFlag = std::atomic<bool>;

// A job's callables. Shared by the pool's table (until the job ends) and the
// worker running an attempt (until it returns), so that ending a job never
// pulls its work out from under a running attempt. `work` never changes
// after Submit; `on_end` and `attempt_stop` only under the pool's lock.
struct LiveJob {
  JobWork work;
  JobEndCallback on_end;
  // The running attempt's flag: each attempt has its own, so that a retry
  // does not start already asked to stop like the attempt that timed out.
  std::shared_ptr<StopFlag> attempt_stop;
};

struct Assignment {
  JobStart start;
  std::shared_ptr<LiveJob> job;
  std::shared_ptr<StopFlag> stop;
};

// Callbacks collected under the lock and run after it is released.
using EndCalls = std::vector<std::pair<JobEndCallback, JobResult>>;

void RunEndCalls(EndCalls& calls) {
  for (auto& [on_end, result] : calls) {
    if (!on_end) continue;
    // A throwing callback must not take down the worker thread that other
    // jobs' slots depend on.
    try {
      on_end(result);
    } catch (...) {
    }
  }
  calls.clear();
}

absl::Status RunWork(const Assignment& a) {
  const JobContext context(a.start.id, a.start.attempt, a.stop.get());
  try {
    return a.job->work(context);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("the job's work threw: ", e.what()));
  } catch (...) {
    return absl::InternalError("the job's work threw a non-standard exception");
  }
}

}  // namespace

class JobPool::Impl {
 public:
  Impl(JobPlanner planner, const Clock* clock)
      : clock_(clock != nullptr ? clock : &real_clock_), planner_(std::move(planner)) {}

  void StartThreads(int workers) {
    for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
    timer_ = std::thread([this] { TimerLoop(); });
  }

  ~Impl() {
    Shutdown();
    {
      std::unique_lock<std::mutex> lock(mu_);
      returned_cv_.wait(lock, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return AllReturned(); });
      exit_ = true;
    }
    work_cv_.notify_all();
    timer_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    timer_.join();
  }

  absl::StatusOr<JobId> Submit(const JobSpec& spec, JobWork work, JobEndCallback on_end) {
    if (!work) return absl::InvalidArgumentError("JobPool::Submit: `work` is empty; pass a callable");
    EndCalls calls;
    absl::StatusOr<JobId> id;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const absl::Time now = clock_->Now();
      id = planner_.Submit(spec, now);
      if (!id.ok()) return id;
      auto job = std::make_shared<LiveJob>();
      job->work = std::move(work);
      job->on_end = std::move(on_end);
      live_[*id] = std::move(job);
      PlanAndApply(now, &calls);
    }
    RunEndCalls(calls);
    return id;
  }

  absl::Status Cancel(JobId id) {
    return Change([&](absl::Time now, JobDecisions* d) { return planner_.Cancel(id, now, d); });
  }
  absl::Status Pause(std::string_view queue) {
    return Change([&](absl::Time, JobDecisions*) { return planner_.Pause(queue); });
  }
  absl::Status Resume(std::string_view queue) {
    return Change([&](absl::Time, JobDecisions*) { return planner_.Resume(queue); });
  }
  absl::Status SetInteractiveDemand(const InteractiveDemand& demand) {
    return Change([&](absl::Time now, JobDecisions*) {
      return planner_.SetInteractiveDemand(demand, now);
    });
  }
  void Tick() {
    (void)Change([](absl::Time, JobDecisions*) { return absl::OkStatus(); });
  }

  void Shutdown() {
    EndCalls calls;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (shut_down_) return;
      shut_down_ = true;
      JobDecisions d;
      planner_.Shutdown(clock_->Now(), &d);
      Apply(d, &calls);
    }
    RunEndCalls(calls);
  }

  JobPoolStats Stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return planner_.Stats(clock_->Now());
  }

 private:
  // Runs `change` on the planner, then Plan, under the lock; the callbacks
  // of any job that ended run after it, on this thread.
  template <typename F>
  absl::Status Change(F change) {
    EndCalls calls;
    absl::Status status;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const absl::Time now = clock_->Now();
      JobDecisions d;
      status = change(now, &d);
      planner_.Plan(now, &d);
      Apply(d, &calls);
    }
    RunEndCalls(calls);
    return status;
  }

  void PlanAndApply(absl::Time now, EndCalls* calls) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    JobDecisions d;
    planner_.Plan(now, &d);
    Apply(d, calls);
  }

  // Hands starts to the workers, raises stop flags and collects the ended
  // jobs' callbacks; the planner's next event may have moved, so the timer
  // thread looks again.
  void Apply(JobDecisions& d, EndCalls* calls) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const JobStart& start : d.starts) {
      std::shared_ptr<LiveJob>& job = live_.at(start.id);
      job->attempt_stop = std::make_shared<StopFlag>(false);
      ready_.push_back({start, job, job->attempt_stop});
    }
    for (const JobId id : d.stops) {
      auto it = live_.find(id);
      if (it != live_.end()) RaiseStop(*it->second);
    }
    for (JobResult& result : d.results) {
      auto it = live_.find(result.id);
      if (it == live_.end()) continue;
      // Whatever runs on, stops: an attempt still running for an ended job.
      RaiseStop(*it->second);
      calls->emplace_back(std::move(it->second->on_end), std::move(result));
      live_.erase(it);
    }
    if (!d.starts.empty()) work_cv_.notify_all();
    timer_wake_ = true;
    timer_cv_.notify_one();
    if (AllReturned()) returned_cv_.notify_all();
  }

  void WorkerLoop() {
    EndCalls calls;
    for (;;) {
      Assignment a;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return WorkerHasSomething();
        });
        if (ready_.empty()) return;
        a = std::move(ready_.front());
        ready_.pop_front();
      }
      // An attempt whose job ended before it began never runs.
      const absl::Status status = a.stop->load(std::memory_order_acquire)
                                      ? absl::CancelledError("stopped before it started")
                                      : RunWork(a);
      {
        std::lock_guard<std::mutex> lock(mu_);
        const absl::Time now = clock_->Now();
        JobDecisions d;
        // Cannot fail: every start handed out is reported exactly once, here.
        (void)planner_.AttemptEnded(a.start.id, a.start.attempt, status, now, &d);
        planner_.Plan(now, &d);
        Apply(d, &calls);
      }
      a = Assignment();
      RunEndCalls(calls);
    }
  }

  void TimerLoop() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    EndCalls calls;
    std::unique_lock<std::mutex> lock(mu_);
    while (!exit_) {
      const absl::Time now = clock_->Now();
      const absl::Time next = planner_.NextEventTime();
      if (next <= now) {
        PlanAndApply(now, &calls);
        lock.unlock();
        RunEndCalls(calls);
        lock.lock();
        continue;
      }
      timer_wake_ = false;
      const auto woken = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return TimerHasSomething(); };
      if (next == absl::InfiniteFuture()) {
        timer_cv_.wait(lock, woken);
      } else {
        // The clock may be a manual one: real time only bounds the wait,
        // and the loop then asks the clock again. Capped, because
        // wait_for overflows on durations near nanoseconds::max().
        const absl::Duration wait = std::min(next - now, absl::Hours(1));
        timer_cv_.wait_for(lock, absl::ToChronoNanoseconds(wait), woken);
      }
    }
  }

  static void RaiseStop(const LiveJob& job) {
    if (job.attempt_stop) job.attempt_stop->store(true, std::memory_order_release);
  }

  bool WorkerHasSomething() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return exit_ || !ready_.empty();
  }
  bool TimerHasSomething() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return exit_ || timer_wake_;
  }
  bool AllReturned() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return planner_.idle() && ready_.empty();
  }

  RealClock real_clock_;
  const Clock* const clock_;
  // A std::mutex rather than absl::Mutex: Debian's prebuilt Abseil is not
  // built with ThreadSanitizer annotations, so TSan cannot see absl::Mutex's
  // ordering and reports false races (as src/scheduler/inbox.h found).
  mutable std::mutex mu_;
  std::condition_variable work_cv_;      // ready_ grew, or exit_
  std::condition_variable timer_cv_;     // timer_wake_, or exit_
  std::condition_variable returned_cv_;  // AllReturned() may have become true
  JobPlanner planner_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<JobId, std::shared_ptr<LiveJob>> live_ ABSL_GUARDED_BY(mu_);
  std::deque<Assignment> ready_ ABSL_GUARDED_BY(mu_);
  bool timer_wake_ ABSL_GUARDED_BY(mu_) = false;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  bool exit_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
  std::thread timer_;
};

absl::StatusOr<std::unique_ptr<JobPool>> JobPool::Create(JobPoolOptions options,
                                                         const Clock* clock) {
  const int workers = options.worker_slots;
  HEARTH_ASSIGN_OR_RETURN(JobPlanner planner, JobPlanner::Create(std::move(options)));
  auto impl = std::make_unique<Impl>(std::move(planner), clock);
  impl->StartThreads(workers);
  return std::unique_ptr<JobPool>(new JobPool(std::move(impl)));
}

JobPool::JobPool(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JobPool::~JobPool() = default;

absl::StatusOr<JobId> JobPool::Submit(const JobSpec& spec, JobWork work, JobEndCallback on_end) {
  return impl_->Submit(spec, std::move(work), std::move(on_end));
}
absl::Status JobPool::Cancel(JobId id) { return impl_->Cancel(id); }
absl::Status JobPool::Pause(std::string_view queue) { return impl_->Pause(queue); }
absl::Status JobPool::Resume(std::string_view queue) { return impl_->Resume(queue); }
absl::Status JobPool::SetInteractiveDemand(const InteractiveDemand& demand) {
  return impl_->SetInteractiveDemand(demand);
}
void JobPool::Tick() { impl_->Tick(); }
void JobPool::Shutdown() { impl_->Shutdown(); }
JobPoolStats JobPool::Stats() const { return impl_->Stats(); }

}  // namespace hearth

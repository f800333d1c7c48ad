// File: hearth/jobs/job_pool.h
//
// `JobPool` runs jobs on its own worker threads under a JobPlanner
// (job_planner.h has every rule: order, aging, limits, give-back, timeouts,
// retries). It owns worker_slots worker threads and one timer thread that
// wakes the planner when a timeout or backoff falls due.
//
// A job's work is a callable that returns absl::Status. Work cannot be
// killed: cancellation and timeouts ask it to stop (JobContext), and its
// slot stays taken until it returns. Long work should poll
// stop_requested() between chunks.
//
// Results: each accepted job's `on_end` is called exactly once, with no
// pool lock held, on the thread that ended it: a worker (it returned), the
// timer thread (a timeout), the caller of Cancel (cancelled) or of the
// destructor/Shutdown (rejected). It may call Submit, Cancel and the rest
// of the pool, but must not block for long (it may run on a worker).
//
// Thread-safety: every method may be called from any thread, concurrently.
// The Clock must be thread-safe (RealClock is) and outlive the pool.
//
// Example:
//   auto pool = *hearth::JobPool::Create(hearth::HouseholdJobQueues(4));
//   hearth::JobSpec spec;
//   spec.queue = "documents";
//   absl::StatusOr<hearth::JobId> id = pool->Submit(
//       spec,
//       [](const hearth::JobContext& ctx) -> absl::Status {
//         for (int page = 0; page < 10; ++page) {
//           if (ctx.stop_requested()) return absl::CancelledError("stopped");
//           // ... parse one page ...
//         }
//         return absl::OkStatus();
//       },
//       [](const hearth::JobResult& r) { /* r.end, r.status */ });
//   // Each engine iteration:
//   (void)pool->SetInteractiveDemand(demand);
//   // On /metrics:
//   std::string text = hearth::JobsPrometheusText(pool->Stats());

#ifndef HEARTH_JOBS_JOB_POOL_H_
#define HEARTH_JOBS_JOB_POOL_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hearth/common/clock.h"
#include "hearth/jobs/interactive_demand.h"
#include "hearth/jobs/job_options.h"
#include "hearth/jobs/job_spec.h"
#include "hearth/jobs/job_stats.h"

namespace hearth {

// What a running attempt may ask of the pool. Owned by the pool; valid for
// the duration of the work call.
class JobContext {
 public:
  JobContext(JobId id, int attempt, const std::atomic<bool>* stop)
      : id_(id), attempt_(attempt), stop_(stop) {}

  JobId id() const { return id_; }
  // 1 for the first attempt.
  int attempt() const { return attempt_; }
  // True once the job is cancelled, timed out or the pool is shutting
  // down: return soon (whatever is returned then no longer matters, except
  // that OK during shutdown still ends the job kDone). Thread-safe.
  bool stop_requested() const {
    return stop_->load(std::memory_order_acquire);
  }

 private:
  JobId id_;
  int attempt_;
  const std::atomic<bool>* stop_;
};

// The work; called once per attempt on a worker thread. Must be callable
// again for a retry.
using JobWork = std::function<absl::Status(const JobContext&)>;
// Called once when the job ends (see above). May be empty.
using JobEndCallback = std::function<void(const JobResult&)>;

class JobPool {
 public:
  // Validates `options` (InvalidArgument, as JobPlanner::Create) and starts
  // the threads. `clock`: nullptr for real time; otherwise thread-safe,
  // not owned, outliving the pool.
  static absl::StatusOr<std::unique_ptr<JobPool>> Create(
      JobPoolOptions options, const Clock* clock = nullptr);
  // Shutdown(), then joins every thread (waiting for running work to
  // return).
  ~JobPool();
  JobPool(const JobPool&) = delete;
  JobPool& operator=(const JobPool&) = delete;

  // JobPool::Submit()
  //
  // As JobPlanner::Submit, plus InvalidArgument for empty `work`, and
  // FailedPrecondition after Shutdown(). On error nothing is kept and
  // `on_end` is never called.
  absl::StatusOr<JobId> Submit(const JobSpec& spec, JobWork work,
                               JobEndCallback on_end = {});

  // JobPool::Cancel()
  //
  // As JobPlanner::Cancel: the job's on_end runs (kCancelled) on this
  // thread before Cancel returns; running work is asked to stop.
  // NotFound for unknown ids and jobs already ended.
  absl::Status Cancel(JobId id);

  // As JobPlanner::Pause / Resume. NotFound for unknown queues.
  absl::Status Pause(std::string_view queue);
  absl::Status Resume(std::string_view queue);

  // As JobPlanner::SetInteractiveDemand, stamped with the clock's now.
  absl::Status SetInteractiveDemand(const InteractiveDemand& demand);

  // Re-reads the clock and applies whatever is due. The timer thread does
  // this by itself with a real clock; a host or test driving a manual
  // clock calls it after moving the clock.
  void Tick();

  // Stops intake, ends waiting jobs kRejected, asks running work to stop.
  // Returns without waiting for it (the destructor waits). Idempotent.
  void Shutdown();

  // A consistent snapshot, as of the clock's now.
  JobPoolStats Stats() const;

 private:
  class Impl;
  explicit JobPool(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth

#endif  // HEARTH_JOBS_JOB_POOL_H_

// File: hearth/jobs/job_planner.h
//
// `JobPlanner` is every decision of the job queues, with no threads and no
// clock of its own: which job starts next, how many slots each queue may
// fill under interactive demand, aging, queue and run timeouts, retries with
// backoff, pause/resume and cancellation. Each call takes `now` and appends
// what it decided to a `JobDecisions`; the caller runs the starts and reports
// each attempt's return with AttemptEnded. Same calls, same decisions, so it
// is tested step by step on a ManualClock. JobPool (job_pool.h) is the thin
// thread-pool executor that drives one; a host with its own threads (an
// event loop, a fibre scheduler) may drive one directly.
//
// Lifecycle of a job:
//   Submit -> waiting --Plan--> running --AttemptEnded--> ended
//                ^                  |
//                +--- backoff <-----+ (retryable error or run timeout,
//                                      retries left)
// A running attempt that is cancelled or times out for the last time ends
// the job at once (its result is in that call's decisions) but keeps its
// slots until AttemptEnded: its thread is still busy.
//
// Order: among the queues whose limits allow a start, the waiting job with
// the smallest rank starts first, rank = submission time - priority *
// aging_period (ties: lower JobId). Ranks do not change while a job waits,
// so aging costs nothing per step; a retry keeps its rank.
//
// Every accepted job ends in exactly one JobResult, in the decisions of the
// call that ended it.
//
// Thread-safety: none; one thread at a time (JobPool holds a mutex).
//
// Example:
//   hearth::ManualClock clock;
//   auto planner = *hearth::JobPlanner::Create(hearth::HouseholdJobQueues(4));
//   hearth::JobSpec spec;
//   spec.queue = "documents";
//   hearth::JobId id = *planner.Submit(spec, clock.Now());
//   hearth::JobDecisions d;
//   planner.Plan(clock.Now(), &d);              // d.starts: {id, attempt 1}
//   clock.Advance(absl::Seconds(2));
//   (void)planner.AttemptEnded(id, 1, absl::OkStatus(), clock.Now(), &d);
//   // d.results: {id, kDone}

#ifndef HEARTH_JOBS_JOB_PLANNER_H_
#define HEARTH_JOBS_JOB_PLANNER_H_

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/jobs/interactive_demand.h"
#include "hearth/jobs/job_options.h"
#include "hearth/jobs/job_spec.h"
#include "hearth/jobs/job_stats.h"

namespace hearth {

// Run attempt `attempt` (1 for the first) of job `id` now.
struct JobStart {
  JobId id;
  int attempt = 0;
  bool uses_io = false;
};

// What one planner call decided; calls append, the caller clears.
struct JobDecisions {
  std::vector<JobStart> starts;
  // Running attempts to ask to stop (cancelled, timed out, shutting down);
  // each still owes an AttemptEnded.
  std::vector<JobId> stops;
  std::vector<JobResult> results;

  void Clear();
  bool empty() const;
};

class JobPlanner {
 public:
  // InvalidArgument naming the field for anything out of range
  // (job_options.h lists every bound).
  static absl::StatusOr<JobPlanner> Create(JobPoolOptions options);
  JobPlanner(JobPlanner&&) noexcept;
  JobPlanner& operator=(JobPlanner&&) noexcept;
  ~JobPlanner();

  // JobPlanner::Submit()
  //
  // Validates `spec` and queues it; the next Plan() may start it.
  // InvalidArgument: unknown queue (the message lists the configured ones),
  //   priority, timeouts, retries or label out of range.
  // ResourceExhausted: the queue already holds max_queued waiting jobs.
  // FailedPrecondition: after Shutdown().
  // `now` earlier than a previous call's is taken as that call's time (the
  // planner's time never goes backwards).
  absl::StatusOr<JobId> Submit(const JobSpec& spec, absl::Time now);

  // JobPlanner::Plan()
  //
  // Applies what is due by `now` (queue timeouts, run timeouts, ends of
  // backoff, expiry of the demand) and starts as many waiting jobs as the
  // limits allow, best rank first.
  void Plan(absl::Time now, JobDecisions* out);

  // JobPlanner::AttemptEnded()
  //
  // Attempt `attempt` of `id` returned `status`. OK ends the job kDone; a
  // retryable error (IsRetryableJobError) with retries left sends it to
  // backoff; any other error ends it kFailed. An attempt already cancelled
  // or timed out only gives its slots back (its status is not used, except
  // that a timed-out attempt with retries left is retried).
  // NotFound: no such running attempt (unknown id, wrong attempt, or
  // reported twice). Does not start anything: call Plan().
  absl::Status AttemptEnded(JobId id, int attempt, const absl::Status& status,
                            absl::Time now, JobDecisions* out);

  // JobPlanner::Cancel()
  //
  // Ends a waiting or backing-off job kCancelled at once; a running one too,
  // and lists it in `out->stops`. NotFound for unknown ids and jobs already
  // ended.
  absl::Status Cancel(JobId id, absl::Time now, JobDecisions* out);

  // JobPlanner::Pause() / Resume()
  //
  // A paused queue starts nothing; its running jobs go on, its waiting jobs
  // wait (their queue timeouts still run). NotFound for unknown names (the
  // message lists the configured ones). Idempotent.
  absl::Status Pause(std::string_view queue);
  absl::Status Resume(std::string_view queue);

  // JobPlanner::SetInteractiveDemand()
  //
  // The demand in force from `now` until replaced or expired
  // (GiveBackOptions::demand_expiry). InvalidArgument: a field out of range
  // (NaN or infinite slack, negative backlog); the previous demand stays.
  absl::Status SetInteractiveDemand(const InteractiveDemand& demand,
                                    absl::Time now);

  // JobPlanner::Shutdown()
  //
  // Refuses further Submits, ends every waiting job kRejected and asks every
  // running attempt to stop. A running job then ends when its attempt
  // returns: kDone if it returned OK, kCancelled otherwise (never retried).
  void Shutdown(absl::Time now, JobDecisions* out);

  // When the next timed event is due (a timeout, the end of a backoff, the
  // demand's expiry); InfiniteFuture() when none.
  absl::Time NextEventTime() const;

  // The snapshot as of `now` (oldest waits are measured to it).
  JobPoolStats Stats(absl::Time now) const;

  // True when no job waits, backs off or runs and no attempt (not even a
  // cancelled one) still holds a slot.
  bool idle() const;

  const JobPoolOptions& options() const;

 private:
  struct State;
  explicit JobPlanner(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace hearth

#endif  // HEARTH_JOBS_JOB_PLANNER_H_

// File: hearth/jobs/job_spec.h
//
// What a job is (`JobSpec`, immutable input) and how it ended (`JobResult`,
// delivered exactly once). A job is work that does not run on the
// accelerator: tokenisation, document parsing, embedding writes, backups,
// model file loading. It belongs to one named queue (job_options.h), which
// supplies every default a spec leaves unset.
//
// Terminal states, each with its reason in JobResult::status:
//   kDone      the work returned OK                         status OK
//   kFailed    the work returned an error that is not retried, or the last
//              allowed attempt failed                        that error
//   kTimedOut  it waited past its queue timeout, or its last allowed attempt
//              ran past its run timeout                      DeadlineExceeded
//   kCancelled JobPool::Cancel / JobPlanner::Cancel, or the pool shut down
//              while it ran and it did not finish OK          Cancelled
//   kRejected  accepted, then refused before it ever started (the pool shut
//              down with the job still waiting)             Unavailable
// A Submit that fails validation or finds the queue full returns an error
// status and creates no job at all; kRejected is only for accepted jobs.
//
// Thread-safety: value types, none.
//
// Example:
//   hearth::JobSpec spec;
//   spec.queue = "documents";
//   spec.priority = 2;
//   spec.run_timeout = absl::Minutes(2);
//   spec.label = "parse invoice.pdf";

#ifndef HEARTH_JOBS_JOB_SPEC_H_
#define HEARTH_JOBS_JOB_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/common/ids.h"

namespace hearth {

// Identifies one submitted job for its whole life; assigned by Submit, never
// reused by the same planner or pool (they count up from 1).
using JobId = StrongId<struct JobIdTag, uint64_t>;

// Priorities are integers in [0, kMaxJobPriority]; larger runs sooner.
inline constexpr int kMaxJobPriority = 100;
// Longest label a job may carry, in bytes.
inline constexpr size_t kMaxJobLabelBytes = 256;
// Most retries a job or queue may ask for.
inline constexpr int kMaxJobRetries = 100;

enum class JobEnd {
  kDone,
  kFailed,
  kTimedOut,
  kCancelled,
  kRejected,
};
inline constexpr int kNumJobEnds = 5;

// "done", "failed", "timed_out", "cancelled", "rejected" (the Prometheus
// `outcome` label values).
std::string_view JobEndName(JobEnd end);

struct JobSpec {
  // Name of a configured queue (JobQueueOptions::name). Required.
  std::string queue;

  // [0, kMaxJobPriority]; unset: the queue's default_priority. Priority
  // orders jobs across all queues, with aging (JobPoolOptions::aging_period):
  // a job is ranked as if it had arrived priority * aging_period earlier, so
  // waiting raises a job exactly as priority does and no job starves.
  std::optional<int> priority;

  // Longest wait from submission to the first start; past it the job ends
  // kTimedOut without running. Must be > 0; absl::InfiniteDuration() means
  // none. Unset: the queue's default. Paused time counts.
  std::optional<absl::Duration> queue_timeout;
  // Longest run of one attempt, from its start. At the deadline the attempt
  // is asked to stop (JobContext::stop_requested()); it is retried, if
  // retries are left, once it has returned, otherwise the job ends kTimedOut
  // at the deadline. Must be > 0; InfiniteDuration() means none. Unset: the
  // queue's default.
  std::optional<absl::Duration> run_timeout;
  // Attempts after the first, for retryable errors and run timeouts, in
  // [0, kMaxJobRetries]. Unset: the queue's retry.max_retries. The backoff
  // between attempts is the queue's (RetryPolicy).
  std::optional<int> max_retries;

  // Whether the job holds an I/O slot while it runs (counts against the
  // queue's and the pool's max_io_depth). Unset: the queue's jobs_use_io.
  std::optional<bool> uses_io;

  // Free text for logs and results, at most kMaxJobLabelBytes bytes.
  std::string label;
};

// Whether an attempt that returned `status` may be retried: kUnavailable,
// kAborted, kDeadlineExceeded, kResourceExhausted, kInternal, kUnknown and
// kDataLoss are (the world may be different next time); every other code,
// kCancelled included, is final (the input or the job itself is wrong).
bool IsRetryableJobError(const absl::Status& status);

// How one job ended. Delivered exactly once per accepted job.
struct JobResult {
  JobId id;
  std::string queue;
  std::string label;
  JobEnd end = JobEnd::kDone;
  // OK for kDone; the reason otherwise (see the table above).
  absl::Status status;
  // Attempts started (0 when it never ran).
  int attempts = 0;
  absl::Time submitted = absl::InfinitePast();
  // Start of the first attempt; InfinitePast() when it never started.
  absl::Time first_started = absl::InfinitePast();
  absl::Time ended = absl::InfinitePast();
};

}  // namespace hearth

#endif  // HEARTH_JOBS_JOB_SPEC_H_

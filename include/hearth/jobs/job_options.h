// File: hearth/jobs/job_options.h
//
// Configuration of the job queues: the pool (`JobPoolOptions`: worker slots,
// the disk's I/O depth, aging, the give-back rule) and each named queue
// (`JobQueueOptions`: its limits and the defaults its jobs inherit). Every
// field is validated by JobPlanner::Create / JobPool::Create, which return
// InvalidArgument naming the field, its value and what is allowed, e.g.
//   JobPoolOptions.queues[1].max_concurrency is 0; must be in [1, 1024]
//
// Limits, all enforced on running attempts (a timed-out or cancelled attempt
// holds its slots until its work actually returns, so the limits hold for
// real threads, not only on paper):
//   running jobs in the pool        <= worker_slots
//   running jobs in a queue         <= the queue's effective concurrency:
//                                      max_concurrency, lowered for
//                                      background queues by the give-back
//                                      rule (interactive_demand.h), 0 while
//                                      paused
//   running I/O jobs in a queue     <= the queue's max_io_depth (if set)
//   running I/O jobs in the pool    <= the pool's max_io_depth (if set)
//
// Example (the household's defaults):
//   hearth::JobPoolOptions options = hearth::HouseholdJobQueues(/*cores=*/8);
//   options.queues[2].concurrency_under_demand = 0;   // scans stop at peak

#ifndef HEARTH_JOBS_JOB_OPTIONS_H_
#define HEARTH_JOBS_JOB_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hearth/jobs/interactive_demand.h"

namespace hearth {

// Bounds of the integer limits below.
inline constexpr int kMaxJobSlots = 1024;
inline constexpr int kMaxJobQueues = 64;
inline constexpr int kMaxQueuedJobs = 1 << 20;
// Longest backoff or aging period accepted.
inline constexpr absl::Duration kMaxJobPeriod = absl::Hours(24);

enum class JobQueueKind {
  // Someone is waiting on it (tokenising a chat prompt): never given back.
  kInteractive,
  // May wait (parsing, embedding writes, backups, scans): uses idle slots
  // and gives them back under interactive demand.
  kBackground,
};

// Backoff before retry k (k = 1, 2, ...):
//   min(initial_backoff * multiplier^(k-1), max_backoff)
// Deterministic (no jitter): jobs of one queue rarely fail in lockstep, and
// tests can name the exact time of every retry.
struct RetryPolicy {
  // In [0, kMaxJobRetries].
  int max_retries = 0;
  // In (0, kMaxJobPeriod].
  absl::Duration initial_backoff = absl::Seconds(1);
  // Finite, in [1, 100].
  double multiplier = 2.0;
  // In [initial_backoff, kMaxJobPeriod].
  absl::Duration max_backoff = absl::Minutes(1);
};

struct JobQueueOptions {
  // [A-Za-z0-9_.-], 1 to 64 bytes, unique in the pool (also the Prometheus
  // `queue` label).
  std::string name;
  JobQueueKind kind = JobQueueKind::kBackground;

  // Running jobs at once, in [1, kMaxJobSlots]. May exceed the pool's
  // worker_slots (the pool's limit then binds).
  int max_concurrency = 1;
  // Background queues only: the limit at full interactive pressure, in
  // [0, max_concurrency]; 0 pauses the queue at full pressure. Ignored for
  // interactive queues.
  int concurrency_under_demand = 1;
  // Running I/O jobs at once, in [1, kMaxJobSlots]; unset: no per-queue I/O
  // limit. A model-load queue has 1.
  std::optional<int> max_io_depth;
  // Whether a job that does not say (JobSpec::uses_io) does I/O.
  bool jobs_use_io = false;

  // Jobs waiting (not running) at once, in [1, kMaxQueuedJobs]; Submit
  // beyond it is ResourceExhausted.
  int max_queued = 4096;
  // Defaults for JobSpec fields left unset (same rules as there).
  int default_priority = 0;
  absl::Duration default_queue_timeout = absl::InfiniteDuration();
  absl::Duration default_run_timeout = absl::InfiniteDuration();
  RetryPolicy retry;

  // Whether the queue starts paused (JobPool::Resume starts it).
  bool start_paused = false;
};

struct JobPoolOptions {
  // At least one queue, at most kMaxJobQueues.
  std::vector<JobQueueOptions> queues;
  // Jobs running at once in the whole pool, in [1, kMaxJobSlots]: the cores
  // lent to jobs. JobPool runs this many worker threads.
  int worker_slots = 4;
  // Running I/O jobs across all queues (the disk's depth), in
  // [1, kMaxJobSlots]; unset: no pool-wide I/O limit.
  std::optional<int> max_io_depth;
  // Aging: one priority level is worth this much waiting, in
  // (0, kMaxJobPeriod]. A job of priority p waits at most as long as the
  // jobs ranked ahead of it take, and every job submitted more than
  // (kMaxJobPriority - p) * aging_period after it ranks behind it.
  absl::Duration aging_period = absl::Seconds(10);
  // How background queues give slots back (interactive_demand.h).
  GiveBackOptions give_back;
};

// Four queues for a household on a machine with `cores` cores lent to jobs
// (clamped to [1, kMaxJobSlots]):
//   "interactive" kInteractive  tokenisation, templating; priority 90,
//                               all cores, run timeout 30 s
//   "documents"   kBackground   parsing, chunking; priority 40, cores - 1,
//                               1 under demand, 2 retries
//   "library"     kBackground   scans, embedding writes, backups; priority
//                               10, half the cores, 0 under demand (paused
//                               at peak), I/O depth 2, 3 retries
//   "model_load"  kBackground   model file loads; priority 60, 1 slot, I/O
//                               depth 1, kept under demand (a load unblocks
//                               the accelerator), 2 retries
// The pool's I/O depth is 4.
JobPoolOptions HouseholdJobQueues(int cores);

}  // namespace hearth

#endif  // HEARTH_JOBS_JOB_OPTIONS_H_

// File: src/jobs/planner_state.h
//
// The JobPlanner's bookkeeping: one record per live job, per-queue ordered
// sets of waiting jobs, and one timer set. Each live job has at most one
// pending timer (its queue timeout while it waits for a first start, the end
// of its backoff, or its run timeout), so state changes move one entry.
// Not part of the public API.

#ifndef HEARTH_JOBS_PLANNER_STATE_H_
#define HEARTH_JOBS_PLANNER_STATE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "hearth/jobs/job_planner.h"
#include "jobs/options_validation.h"

namespace hearth::jobs_internal {

enum class JobPhase {
  kWaiting,   // ready to start (in its queue's ready set)
  kBackoff,   // waiting for its backoff timer before a retry
  kRunning,   // an attempt holds slots
  kStopping,  // an attempt holds slots and was asked to stop
};

// What a stopping attempt's return means.
enum class OnReturn {
  kNothing,       // the job already ended; only free the slots
  kRetry,         // timed out with retries left: back off, then retry
  kEndByStatus,   // shutdown: OK ends it kDone, anything else kCancelled
};

struct JobRecord {
  JobId id;
  int queue = 0;
  ResolvedJob job;
  std::string label;
  JobPhase phase = JobPhase::kWaiting;
  OnReturn on_return = OnReturn::kNothing;
  // Starting order key: submission - priority * aging_period; fixed.
  absl::Time rank;
  absl::Time submitted;
  absl::Time first_started = absl::InfinitePast();
  absl::Time attempt_started = absl::InfinitePast();
  int attempts = 0;
  // The pending timer, InfiniteFuture() when none.
  absl::Time timer = absl::InfiniteFuture();
};

using TimeKey = std::pair<absl::Time, JobId>;

struct QueueState {
  JobQueueOptions options;
  bool paused = false;
  // Ready jobs by rank, apart by whether they need an I/O slot, so a queue
  // whose I/O depth is full can still start its best CPU job.
  absl::btree_set<TimeKey> ready_cpu;
  absl::btree_set<TimeKey> ready_io;
  // Waiting and backing-off jobs by submission time (oldest wait).
  absl::btree_set<TimeKey> by_age;
  int64_t backing_off = 0;
  int64_t running = 0;
  int64_t io_running = 0;
  // Counters and histograms (the gauges above are copied in at Stats()).
  JobQueueStats stats;

  int64_t waiting() const { return static_cast<int64_t>(by_age.size()); }
};

struct PlannerState {
  JobPoolOptions options;
  std::vector<QueueState> queues;
  absl::flat_hash_map<std::string, int> queue_index;
  absl::flat_hash_map<JobId, JobRecord> jobs;
  absl::btree_set<TimeKey> timers;
  uint64_t next_id = 1;
  // Never goes backwards (a late `now` is taken as this).
  absl::Time now = absl::InfinitePast();
  InteractiveDemand demand;
  absl::Time demand_at = absl::InfinitePast();
  int64_t running = 0;
  int64_t io_running = 0;
  bool shut_down = false;
};

}  // namespace hearth::jobs_internal

#endif  // HEARTH_JOBS_PLANNER_STATE_H_

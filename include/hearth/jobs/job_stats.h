// File: hearth/jobs/job_stats.h
//
// A snapshot of the job queues (`JobPoolStats`): per queue its depth, oldest
// wait, running jobs, limits in force, counters since start and latency
// histograms; and the pool's totals and interactive pressure. Taken by
// JobPlanner::Stats / JobPool::Stats, rendered by JobsPrometheusText
// (jobs_prometheus.h). Counters only grow; gauges are as of `at`.
//
// Units: seconds in histograms, absl::Duration elsewhere, jobs as counts.
//
// Thread-safety: value types, none.

#ifndef HEARTH_JOBS_JOB_STATS_H_
#define HEARTH_JOBS_JOB_STATS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hearth/jobs/interactive_demand.h"
#include "hearth/jobs/job_options.h"
#include "hearth/jobs/job_spec.h"
#include "hearth/metrics/latency_histogram.h"

namespace hearth {

struct JobQueueStats {
  std::string name;
  JobQueueKind kind = JobQueueKind::kBackground;
  bool paused = false;

  // Gauges.
  // Jobs waiting: ready to start, or backing off before a retry (depth).
  int64_t queued = 0;
  // Of `queued`, those backing off.
  int64_t backing_off = 0;
  // How long the longest-waiting queued job has waited since it was
  // submitted (retries keep their submission time); zero when none.
  absl::Duration oldest_wait = absl::ZeroDuration();
  // Attempts holding a slot, including ones asked to stop (cancelled or
  // timed out) that have not returned yet.
  int64_t running = 0;
  // Of `running`, those holding an I/O slot.
  int64_t io_in_flight = 0;
  // The concurrency limit new starts obey now (give-back and pause
  // applied), and the configured one.
  int effective_concurrency = 0;
  int max_concurrency = 0;

  // Counters.
  uint64_t submitted = 0;
  // Attempts started after the first (each retry once).
  uint64_t retries = 0;
  // Jobs ended, indexed by JobEnd.
  std::array<uint64_t, kNumJobEnds> ended{};
  uint64_t ended_as(JobEnd end) const { return ended[static_cast<int>(end)]; }

  // Histograms, seconds.
  // Submission to first start (started jobs).
  LatencyHistogram queue_wait;
  // Start to return of each attempt that returned.
  LatencyHistogram run_time;
  // Submission to the end, for jobs that ended kDone.
  LatencyHistogram done_latency;
};

struct JobPoolStats {
  absl::Time at = absl::InfinitePast();
  // In configuration order.
  std::vector<JobQueueStats> queues;
  int worker_slots = 0;
  int64_t running = 0;
  int64_t io_in_flight = 0;
  // The give-back pressure in force, [0, 1], and the demand it came from
  // (zero demand once expired).
  double interactive_pressure = 0;
  InteractiveDemand demand;
};

}  // namespace hearth

#endif  // HEARTH_JOBS_JOB_STATS_H_

// File: hearth/jobs/jobs_prometheus.h
//
// Renders a JobPoolStats snapshot in the Prometheus text exposition format
// (0.0.4), in the same style as the core's PrometheusText (prometheus.h):
// same prefix rule, same histogram buckets (LatencyHistogram::kBounds, 1 ms
// to 300 s then +Inf; a model load or backup longer than 300 s lands in
// +Inf), one partition label per family plus `outcome` where the core has
// it. A host serves both texts, concatenated, on /metrics; the names do
// not collide (every family here starts <p>_jobs_).
//
// Families (<p> = prefix; c = counter, g = gauge, h = histogram):
//   per queue {queue}:
//     g <p>_jobs_queued, <p>_jobs_backing_off, <p>_jobs_running,
//       <p>_jobs_io_in_flight
//     g <p>_jobs_oldest_wait_seconds
//     g <p>_jobs_concurrency_limit (effective), <p>_jobs_max_concurrency
//     g <p>_jobs_paused (0 or 1)
//     c <p>_jobs_submitted_total, <p>_jobs_retries_total
//     c <p>_jobs_ended_total{outcome=done|failed|timed_out|cancelled|rejected}
//     h <p>_jobs_queue_wait_seconds, <p>_jobs_run_seconds,
//       <p>_jobs_done_latency_seconds
//   pool-wide:
//     g <p>_jobs_worker_slots, <p>_jobs_interactive_pressure (0-1),
//       <p>_jobs_interactive_backlog, <p>_jobs_interactive_slo_slack
//
// Thread-safety: a pure function.
//
// Example:
//   std::string body = hearth::PrometheusText(collector.Report(), po) +
//                      hearth::JobsPrometheusText(jobs->Stats());
//   // hearth_jobs_queued{queue="documents"} 3

#ifndef HEARTH_JOBS_JOBS_PROMETHEUS_H_
#define HEARTH_JOBS_JOBS_PROMETHEUS_H_

#include <string>
#include <string_view>

#include "hearth/jobs/job_stats.h"

namespace hearth {

// `prefix` must match [a-zA-Z_:][a-zA-Z0-9_:]*; an invalid one is replaced
// by "hearth" (as PrometheusOptions::prefix).
std::string JobsPrometheusText(const JobPoolStats& stats,
                               std::string_view prefix = "hearth");

}  // namespace hearth

#endif  // HEARTH_JOBS_JOBS_PROMETHEUS_H_

// File: examples/serve/src/jobs_status_json.h
//
// The "jobs" part of GET /v1/hearth/status: the CPU and storage job queues
// (templating and tokenisation, document parsing, model loads) as the
// dashboard draws them. Per queue: kind, paused, depth (queued, of which
// backing off), oldest wait, running, I/O in flight, the concurrency limit
// in force against the configured one (lower while background queues give
// cores back), and jobs submitted, retried and ended by outcome. For the
// pool: worker slots, running, and the interactive pressure in force with
// the demand the engine last reported. Durations in seconds.
//
//   "jobs": {"worker_slots": 2, "running": 0, "interactive_pressure": 0.0,
//            "demand": {"interactive_backlog": 0, "slo_slack": 1.0},
//            "queues": [{"name": "documents", "kind": "background",
//                        "concurrency_limit": 1, "max_concurrency": 1, ...}]}
//
// Thread-safety: a plain function.

#ifndef HEARTH_SERVE_JOBS_STATUS_JSON_H_
#define HEARTH_SERVE_JOBS_STATUS_JSON_H_

#include "hearth/jobs/job_stats.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {

nlohmann::json JobsStatusJson(const JobPoolStats& stats);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_JOBS_STATUS_JSON_H_

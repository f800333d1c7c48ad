// File: hearth/jobs/jobs.h
//
// Umbrella header of the job queues (`hearth::jobs`, install component
// `jobs`): CPU and storage work beside the accelerator -- named queues with
// concurrency and I/O-depth limits, priority with aging, timeouts, retries,
// pause/resume, and give-back of cores under interactive demand. Start with
// job_pool.h (the executor) or job_planner.h (the rules).

#ifndef HEARTH_JOBS_JOBS_H_
#define HEARTH_JOBS_JOBS_H_

#include "hearth/jobs/interactive_demand.h"
#include "hearth/jobs/job_options.h"
#include "hearth/jobs/job_planner.h"
#include "hearth/jobs/job_pool.h"
#include "hearth/jobs/job_spec.h"
#include "hearth/jobs/job_stats.h"
#include "hearth/jobs/jobs_prometheus.h"

#endif  // HEARTH_JOBS_JOBS_H_

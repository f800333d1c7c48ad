// File: src/jobs/planner_steps.h
//
// The steps of a job's life on PlannerState, each keeping every set, counter
// and timer in step: into the ready sets, out of them, into backoff, onto a
// slot and off it, ended. JobPlanner's public calls are sequences of these.
// Not part of the public API.

#ifndef HEARTH_JOBS_PLANNER_STEPS_H_
#define HEARTH_JOBS_PLANNER_STEPS_H_

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/jobs/job_planner.h"
#include "jobs/planner_state.h"

namespace hearth::jobs_internal {

// Moves the planner's time to `now` unless that is earlier.
void Advance(PlannerState& s, absl::Time now);

// Replaces `job`'s pending timer (InfiniteFuture() clears it).
void SetTimer(PlannerState& s, JobRecord& job, absl::Time at);

// Makes `job` ready to start (phase kWaiting).
void EnqueueReady(PlannerState& s, JobRecord& job);
// Takes a waiting or backing-off `job` out of its queue's sets.
void RemoveWaiting(PlannerState& s, JobRecord& job);
// Gives back a running or stopping attempt's slots; observes its run time.
void ReleaseSlots(PlannerState& s, JobRecord& job);
// Sends `job` (off its slots) to wait for its next attempt.
void StartBackoff(PlannerState& s, JobRecord& job);

// Appends `job`'s result and counts it. The caller erases the record or
// keeps it while its attempt still holds slots.
void EndJob(PlannerState& s, const JobRecord& job, JobEnd end, absl::Status status,
            JobDecisions* out);

// Applies every timer due by s.now, in time order.
void FireDueTimers(PlannerState& s, JobDecisions* out);
// Starts waiting jobs, best rank first, while the limits allow.
void StartJobs(PlannerState& s, JobDecisions* out);

// The give-back pressure in force at s.now (0 once the demand expired).
double CurrentPressure(const PlannerState& s);
// The concurrency limit for new starts in `q` at `pressure`.
int EffectiveConcurrency(const QueueState& q, double pressure);

}  // namespace hearth::jobs_internal

#endif  // HEARTH_JOBS_PLANNER_STEPS_H_

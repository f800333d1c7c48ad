#include "jobs/planner_steps.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"

namespace hearth::jobs_internal {
namespace {

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

absl::btree_set<TimeKey>& ReadySet(QueueState& q, const JobRecord& job) {
  return job.job.uses_io ? q.ready_io : q.ready_cpu;
}

absl::Duration BackoffBefore(const RetryPolicy& r, int retry) {
  // Computed in seconds so that a large multiplier^k saturates instead of
  // overflowing a Duration product.
  const double seconds =
      Seconds(r.initial_backoff) * std::pow(r.multiplier, std::max(0, retry - 1));
  return std::min(absl::Seconds(std::min(seconds, 1e12)), r.max_backoff);
}

bool IoAllowed(const PlannerState& s, const QueueState& q) {
  if (q.options.max_io_depth && q.io_running >= *q.options.max_io_depth) return false;
  return !s.options.max_io_depth || s.io_running < *s.options.max_io_depth;
}

// The best ready job `q` may start now, if any.
std::optional<TimeKey> BestStartable(const PlannerState& s, const QueueState& q, int limit) {
  if (q.running >= limit) return std::nullopt;
  std::optional<TimeKey> best;
  if (!q.ready_cpu.empty()) best = *q.ready_cpu.begin();
  if (!q.ready_io.empty() && IoAllowed(s, q) && (!best || *q.ready_io.begin() < *best)) {
    best = *q.ready_io.begin();
  }
  return best;
}

void StartAttempt(PlannerState& s, JobRecord& job, JobDecisions* out) {
  QueueState& q = s.queues[job.queue];
  RemoveWaiting(s, job);
  job.phase = JobPhase::kRunning;
  job.attempt_started = s.now;
  if (++job.attempts == 1) {
    job.first_started = s.now;
    q.stats.queue_wait.Observe(Seconds(s.now - job.submitted));
  } else {
    ++q.stats.retries;
  }
  ++q.running;
  ++s.running;
  if (job.job.uses_io) {
    ++q.io_running;
    ++s.io_running;
  }
  SetTimer(s, job, s.now + job.job.run_timeout);
  out->starts.push_back({job.id, job.attempts, job.job.uses_io});
}

void QueueTimedOut(PlannerState& s, JobRecord& job, JobDecisions* out) {
  RemoveWaiting(s, job);
  EndJob(s, job, JobEnd::kTimedOut,
         absl::DeadlineExceededError(absl::StrCat(
             "waited ", absl::FormatDuration(s.now - job.submitted),
             " without starting, past its queue timeout of ",
             absl::FormatDuration(job.job.queue_timeout))),
         out);
  s.jobs.erase(job.id);
}

void RunTimedOut(PlannerState& s, JobRecord& job, JobDecisions* out) {
  job.phase = JobPhase::kStopping;
  out->stops.push_back(job.id);
  if (job.attempts <= job.job.max_retries && !s.shut_down) {
    job.on_return = OnReturn::kRetry;
    return;
  }
  job.on_return = OnReturn::kNothing;
  EndJob(s, job, JobEnd::kTimedOut,
         absl::DeadlineExceededError(absl::StrCat(
             "attempt ", job.attempts, " ran past its run timeout of ",
             absl::FormatDuration(job.job.run_timeout))),
         out);
}

}  // namespace

void Advance(PlannerState& s, absl::Time now) { s.now = std::max(s.now, now); }

void SetTimer(PlannerState& s, JobRecord& job, absl::Time at) {
  if (job.timer != absl::InfiniteFuture()) s.timers.erase({job.timer, job.id});
  job.timer = at;
  if (at != absl::InfiniteFuture()) s.timers.insert({at, job.id});
}

void EnqueueReady(PlannerState& s, JobRecord& job) {
  QueueState& q = s.queues[job.queue];
  job.phase = JobPhase::kWaiting;
  ReadySet(q, job).insert({job.rank, job.id});
  q.by_age.insert({job.submitted, job.id});
}

void RemoveWaiting(PlannerState& s, JobRecord& job) {
  QueueState& q = s.queues[job.queue];
  if (job.phase == JobPhase::kBackoff) --q.backing_off;
  ReadySet(q, job).erase({job.rank, job.id});
  q.by_age.erase({job.submitted, job.id});
  SetTimer(s, job, absl::InfiniteFuture());
}

void ReleaseSlots(PlannerState& s, JobRecord& job) {
  QueueState& q = s.queues[job.queue];
  q.stats.run_time.Observe(Seconds(s.now - job.attempt_started));
  --q.running;
  --s.running;
  if (job.job.uses_io) {
    --q.io_running;
    --s.io_running;
  }
  SetTimer(s, job, absl::InfiniteFuture());
}

void StartBackoff(PlannerState& s, JobRecord& job) {
  QueueState& q = s.queues[job.queue];
  job.phase = JobPhase::kBackoff;
  job.on_return = OnReturn::kNothing;
  ++q.backing_off;
  q.by_age.insert({job.submitted, job.id});
  SetTimer(s, job, s.now + BackoffBefore(q.options.retry, job.attempts));
}

void EndJob(PlannerState& s, const JobRecord& job, JobEnd end, absl::Status status,
            JobDecisions* out) {
  QueueState& q = s.queues[job.queue];
  ++q.stats.ended[static_cast<int>(end)];
  if (end == JobEnd::kDone) q.stats.done_latency.Observe(Seconds(s.now - job.submitted));
  JobResult r;
  r.id = job.id;
  r.queue = q.options.name;
  r.label = job.label;
  r.end = end;
  r.status = std::move(status);
  r.attempts = job.attempts;
  r.submitted = job.submitted;
  r.first_started = job.first_started;
  r.ended = s.now;
  out->results.push_back(std::move(r));
}

void FireDueTimers(PlannerState& s, JobDecisions* out) {
  while (!s.timers.empty() && s.timers.begin()->first <= s.now) {
    const JobId id = s.timers.begin()->second;
    JobRecord& job = s.jobs.at(id);
    switch (job.phase) {
      case JobPhase::kWaiting:
        QueueTimedOut(s, job, out);
        break;
      case JobPhase::kBackoff:
        RemoveWaiting(s, job);
        EnqueueReady(s, job);
        break;
      case JobPhase::kRunning:
        SetTimer(s, job, absl::InfiniteFuture());
        RunTimedOut(s, job, out);
        break;
      case JobPhase::kStopping:
        SetTimer(s, job, absl::InfiniteFuture());
        break;
    }
  }
}

void StartJobs(PlannerState& s, JobDecisions* out) {
  const double pressure = CurrentPressure(s);
  std::vector<int> limits;
  limits.reserve(s.queues.size());
  for (const QueueState& q : s.queues) limits.push_back(EffectiveConcurrency(q, pressure));
  while (s.running < s.options.worker_slots) {
    std::optional<TimeKey> best;
    for (size_t i = 0; i < s.queues.size(); ++i) {
      const std::optional<TimeKey> c = BestStartable(s, s.queues[i], limits[i]);
      if (c && (!best || *c < *best)) best = c;
    }
    if (!best) return;
    StartAttempt(s, s.jobs.at(best->second), out);
  }
}

double CurrentPressure(const PlannerState& s) {
  if (s.demand_at == absl::InfinitePast()) return 0.0;
  if (s.now >= s.demand_at + s.options.give_back.demand_expiry) return 0.0;
  return InteractivePressure(s.demand, s.options.give_back);
}

int EffectiveConcurrency(const QueueState& q, double pressure) {
  if (q.paused) return 0;
  if (q.options.kind == JobQueueKind::kInteractive) return q.options.max_concurrency;
  return BackgroundConcurrency(q.options.max_concurrency, q.options.concurrency_under_demand,
                               pressure);
}

}  // namespace hearth::jobs_internal

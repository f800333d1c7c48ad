#include "hearth/jobs/job_planner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/status_macros.h"
#include "jobs/options_validation.h"
#include "jobs/planner_state.h"
#include "jobs/planner_steps.h"

namespace hearth {

using jobs_internal::JobPhase;
using jobs_internal::JobRecord;
using jobs_internal::OnReturn;
using jobs_internal::QueueState;

struct JobPlanner::State : jobs_internal::PlannerState {};

namespace {

std::string QueueNames(const jobs_internal::PlannerState& s) {
  std::vector<std::string> names;
  for (const QueueState& q : s.queues) names.push_back(q.options.name);
  return absl::StrCat("\"", absl::StrJoin(names, "\", \""), "\"");
}

absl::StatusOr<int> FindQueue(const jobs_internal::PlannerState& s, std::string_view name,
                              absl::StatusCode code) {
  auto it = s.queue_index.find(absl::string_view(name.data(), name.size()));
  if (it != s.queue_index.end()) return it->second;
  return absl::Status(code, absl::StrCat("no job queue named \"",
                                         absl::CHexEscape(absl::string_view(name.data(), std::min<size_t>(name.size(), 80))),
                                         "\"; the queues are ", QueueNames(s)));
}

// The live jobs in id order, so that walks over them decide alike every run.
std::vector<JobId> SortedIds(const jobs_internal::PlannerState& s) {
  std::vector<JobId> ids;
  ids.reserve(s.jobs.size());
  for (const auto& [id, job] : s.jobs) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

void JobDecisions::Clear() {
  starts.clear();
  stops.clear();
  results.clear();
}

bool JobDecisions::empty() const { return starts.empty() && stops.empty() && results.empty(); }

absl::StatusOr<JobPlanner> JobPlanner::Create(JobPoolOptions options) {
  HEARTH_RETURN_IF_ERROR(jobs_internal::ValidatePoolOptions(options));
  auto state = std::make_unique<State>();
  for (const JobQueueOptions& q : options.queues) {
    state->queue_index[q.name] = static_cast<int>(state->queues.size());
    QueueState& queue = state->queues.emplace_back();
    queue.options = q;
    queue.paused = q.start_paused;
    queue.stats.name = q.name;
    queue.stats.kind = q.kind;
    queue.stats.max_concurrency = q.max_concurrency;
  }
  state->options = std::move(options);
  return JobPlanner(std::move(state));
}

JobPlanner::JobPlanner(std::unique_ptr<State> state) : state_(std::move(state)) {}
JobPlanner::JobPlanner(JobPlanner&&) noexcept = default;
JobPlanner& JobPlanner::operator=(JobPlanner&&) noexcept = default;
JobPlanner::~JobPlanner() = default;

absl::StatusOr<JobId> JobPlanner::Submit(const JobSpec& spec, absl::Time now) {
  State& s = *state_;
  if (s.shut_down) return absl::FailedPreconditionError("the job planner is shut down");
  HEARTH_ASSIGN_OR_RETURN(const int qi,
                          FindQueue(s, spec.queue, absl::StatusCode::kInvalidArgument));
  QueueState& q = s.queues[qi];
  HEARTH_ASSIGN_OR_RETURN(jobs_internal::ResolvedJob resolved,
                          jobs_internal::ResolveJobSpec(spec, q.options));
  if (q.waiting() >= q.options.max_queued) {
    return absl::ResourceExhaustedError(
        absl::StrCat("job queue \"", q.options.name, "\" already holds ", q.waiting(),
                     " waiting jobs, its max_queued; retry later"));
  }
  jobs_internal::Advance(s, now);
  const JobId id(s.next_id++);
  JobRecord& job = s.jobs[id];
  job.id = id;
  job.queue = qi;
  job.job = resolved;
  job.label = spec.label;
  job.submitted = s.now;
  job.rank = s.now - resolved.priority * s.options.aging_period;
  jobs_internal::EnqueueReady(s, job);
  jobs_internal::SetTimer(s, job, s.now + resolved.queue_timeout);
  ++q.stats.submitted;
  return id;
}

void JobPlanner::Plan(absl::Time now, JobDecisions* out) {
  State& s = *state_;
  jobs_internal::Advance(s, now);
  jobs_internal::FireDueTimers(s, out);
  if (!s.shut_down) jobs_internal::StartJobs(s, out);
}

absl::Status JobPlanner::AttemptEnded(JobId id, int attempt, const absl::Status& status,
                                      absl::Time now, JobDecisions* out) {
  State& s = *state_;
  auto it = s.jobs.find(id);
  if (it == s.jobs.end() || it->second.attempts != attempt ||
      (it->second.phase != JobPhase::kRunning && it->second.phase != JobPhase::kStopping)) {
    return absl::NotFoundError(absl::StrCat("job ", id.ToString(), " has no running attempt ",
                                            attempt, " (unknown, or reported already)"));
  }
  jobs_internal::Advance(s, now);
  JobRecord& job = it->second;
  jobs_internal::ReleaseSlots(s, job);
  const bool stopping = job.phase == JobPhase::kStopping;
  const bool retry = stopping ? job.on_return == OnReturn::kRetry
                              : !status.ok() && IsRetryableJobError(status) &&
                                    job.attempts <= job.job.max_retries && !s.shut_down;
  if (retry) {
    jobs_internal::StartBackoff(s, job);
    return absl::OkStatus();
  }
  if (!stopping || job.on_return == OnReturn::kEndByStatus) {
    if (status.ok()) {
      jobs_internal::EndJob(s, job, JobEnd::kDone, absl::OkStatus(), out);
    } else if (stopping) {
      jobs_internal::EndJob(s, job, JobEnd::kCancelled,
                            absl::CancelledError(absl::StrCat(
                                "the job pool shut down while the job ran; it returned: ",
                                status.ToString())),
                            out);
    } else {
      jobs_internal::EndJob(s, job, JobEnd::kFailed, status, out);
    }
  }
  s.jobs.erase(it);
  return absl::OkStatus();
}

absl::Status JobPlanner::Cancel(JobId id, absl::Time now, JobDecisions* out) {
  State& s = *state_;
  auto it = s.jobs.find(id);
  if (it == s.jobs.end() ||
      (it->second.phase == JobPhase::kStopping && it->second.on_return == OnReturn::kNothing)) {
    return absl::NotFoundError(
        absl::StrCat("job ", id.ToString(), " is unknown or has already ended"));
  }
  jobs_internal::Advance(s, now);
  JobRecord& job = it->second;
  const absl::Status reason = absl::CancelledError("cancelled by the host");
  switch (job.phase) {
    case JobPhase::kWaiting:
    case JobPhase::kBackoff:
      jobs_internal::RemoveWaiting(s, job);
      jobs_internal::EndJob(s, job, JobEnd::kCancelled, reason, out);
      s.jobs.erase(it);
      break;
    case JobPhase::kRunning:
      jobs_internal::SetTimer(s, job, absl::InfiniteFuture());
      out->stops.push_back(id);
      [[fallthrough]];
    case JobPhase::kStopping:
      job.phase = JobPhase::kStopping;
      job.on_return = OnReturn::kNothing;
      jobs_internal::EndJob(s, job, JobEnd::kCancelled, reason, out);
      break;
  }
  return absl::OkStatus();
}

absl::Status JobPlanner::Pause(std::string_view queue) {
  HEARTH_ASSIGN_OR_RETURN(const int qi, FindQueue(*state_, queue, absl::StatusCode::kNotFound));
  state_->queues[qi].paused = true;
  return absl::OkStatus();
}

absl::Status JobPlanner::Resume(std::string_view queue) {
  HEARTH_ASSIGN_OR_RETURN(const int qi, FindQueue(*state_, queue, absl::StatusCode::kNotFound));
  state_->queues[qi].paused = false;
  return absl::OkStatus();
}

absl::Status JobPlanner::SetInteractiveDemand(const InteractiveDemand& demand, absl::Time now) {
  HEARTH_RETURN_IF_ERROR(ValidateInteractiveDemand(demand));
  State& s = *state_;
  jobs_internal::Advance(s, now);
  s.demand = demand;
  s.demand_at = s.now;
  return absl::OkStatus();
}

void JobPlanner::Shutdown(absl::Time now, JobDecisions* out) {
  State& s = *state_;
  jobs_internal::Advance(s, now);
  s.shut_down = true;
  const absl::Status never_started =
      absl::UnavailableError("the job pool shut down before the job started");
  for (const JobId id : SortedIds(s)) {
    JobRecord& job = s.jobs.at(id);
    if (job.phase == JobPhase::kWaiting || job.phase == JobPhase::kBackoff) {
      jobs_internal::RemoveWaiting(s, job);
      jobs_internal::EndJob(s, job, JobEnd::kRejected, never_started, out);
      s.jobs.erase(id);
    } else if (job.phase == JobPhase::kRunning) {
      jobs_internal::SetTimer(s, job, absl::InfiniteFuture());
      job.phase = JobPhase::kStopping;
      job.on_return = OnReturn::kEndByStatus;
      out->stops.push_back(id);
    } else if (job.on_return == OnReturn::kRetry) {
      job.on_return = OnReturn::kNothing;
      jobs_internal::EndJob(s, job, JobEnd::kTimedOut,
                            absl::DeadlineExceededError(
                                "ran past its run timeout; the pool shut down before a retry"),
                            out);
    }
  }
}

absl::Time JobPlanner::NextEventTime() const {
  const State& s = *state_;
  absl::Time next = s.timers.empty() ? absl::InfiniteFuture() : s.timers.begin()->first;
  if (jobs_internal::CurrentPressure(s) > 0) {
    next = std::min(next, s.demand_at + s.options.give_back.demand_expiry);
  }
  return next;
}

JobPoolStats JobPlanner::Stats(absl::Time now) const {
  const State& s = *state_;
  const absl::Time at = std::max(now, s.now);
  JobPoolStats out;
  out.at = at;
  out.worker_slots = s.options.worker_slots;
  out.running = s.running;
  out.io_in_flight = s.io_running;
  out.interactive_pressure = jobs_internal::CurrentPressure(s);
  if (s.now < s.demand_at + s.options.give_back.demand_expiry) out.demand = s.demand;
  for (const QueueState& q : s.queues) {
    JobQueueStats& st = out.queues.emplace_back(q.stats);
    st.paused = q.paused;
    st.queued = q.waiting();
    st.backing_off = q.backing_off;
    st.oldest_wait = q.by_age.empty() ? absl::ZeroDuration() : at - q.by_age.begin()->first;
    st.running = q.running;
    st.io_in_flight = q.io_running;
    st.effective_concurrency = jobs_internal::EffectiveConcurrency(q, out.interactive_pressure);
  }
  return out;
}

bool JobPlanner::idle() const { return state_->jobs.empty(); }

const JobPoolOptions& JobPlanner::options() const { return state_->options; }

}  // namespace hearth

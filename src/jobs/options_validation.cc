#include "jobs/options_validation.h"

#include <cmath>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"

namespace hearth::jobs_internal {
namespace {

constexpr size_t kMaxQueueNameBytes = 64;

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, " ", what));
}

absl::Status CheckInt(absl::string_view field, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return absl::OkStatus();
  return Invalid(field, absl::StrCat("is ", v, "; must be in [", lo, ", ", hi, "]"));
}

// A timeout: positive, InfiniteDuration() meaning none.
absl::Status CheckTimeout(absl::string_view field, absl::Duration d) {
  if (d > absl::ZeroDuration()) return absl::OkStatus();
  return Invalid(field, absl::StrCat("is ", absl::FormatDuration(d),
                                     "; must be > 0 (InfiniteDuration() for none)"));
}

// A period: positive and finite, at most `hi`.
absl::Status CheckPeriod(absl::string_view field, absl::Duration d, absl::Duration lo_exclusive,
                         absl::Duration hi) {
  if (d > lo_exclusive && d <= hi) return absl::OkStatus();
  return Invalid(field, absl::StrCat("is ", absl::FormatDuration(d), "; must be in (",
                                     absl::FormatDuration(lo_exclusive), ", ",
                                     absl::FormatDuration(hi), "]"));
}

bool ValidQueueName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxQueueNameBytes) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

absl::Status ValidateRetry(const std::string& f, const RetryPolicy& r) {
  HEARTH_RETURN_IF_ERROR(CheckInt(f + "max_retries", r.max_retries, 0, kMaxJobRetries));
  HEARTH_RETURN_IF_ERROR(CheckPeriod(f + "initial_backoff", r.initial_backoff,
                                     absl::ZeroDuration(), kMaxJobPeriod));
  if (!(r.multiplier >= 1.0 && r.multiplier <= 100.0)) {
    return Invalid(f + "multiplier",
                   absl::StrCat("is ", r.multiplier, "; must be finite, in [1, 100]"));
  }
  if (r.max_backoff < r.initial_backoff || r.max_backoff > kMaxJobPeriod) {
    return Invalid(f + "max_backoff",
                   absl::StrCat("is ", absl::FormatDuration(r.max_backoff), "; must be in [",
                                absl::FormatDuration(r.initial_backoff), " (initial_backoff), ",
                                absl::FormatDuration(kMaxJobPeriod), "]"));
  }
  return absl::OkStatus();
}

absl::Status ValidateQueue(const std::string& f, const JobQueueOptions& q) {
  if (!ValidQueueName(q.name)) {
    return Invalid(f + "name", absl::StrCat("is \"", absl::CHexEscape(q.name.substr(0, 80)),
                                            "\"; must be 1 to 64 bytes of [A-Za-z0-9_.-]"));
  }
  HEARTH_RETURN_IF_ERROR(CheckInt(f + "max_concurrency", q.max_concurrency, 1, kMaxJobSlots));
  HEARTH_RETURN_IF_ERROR(CheckInt(f + "concurrency_under_demand", q.concurrency_under_demand,
                                  0, q.max_concurrency));
  if (q.max_io_depth) {
    HEARTH_RETURN_IF_ERROR(CheckInt(f + "max_io_depth", *q.max_io_depth, 1, kMaxJobSlots));
  }
  HEARTH_RETURN_IF_ERROR(CheckInt(f + "max_queued", q.max_queued, 1, kMaxQueuedJobs));
  HEARTH_RETURN_IF_ERROR(
      CheckInt(f + "default_priority", q.default_priority, 0, kMaxJobPriority));
  HEARTH_RETURN_IF_ERROR(CheckTimeout(f + "default_queue_timeout", q.default_queue_timeout));
  HEARTH_RETURN_IF_ERROR(CheckTimeout(f + "default_run_timeout", q.default_run_timeout));
  return ValidateRetry(f + "retry.", q.retry);
}

}  // namespace

absl::Status ValidatePoolOptions(const JobPoolOptions& o) {
  if (o.queues.empty() || o.queues.size() > static_cast<size_t>(kMaxJobQueues)) {
    return Invalid("JobPoolOptions.queues", absl::StrCat("has ", o.queues.size(),
                                                         " queues; must have 1 to ",
                                                         kMaxJobQueues));
  }
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < o.queues.size(); ++i) {
    const std::string f = absl::StrCat("JobPoolOptions.queues[", i, "].");
    HEARTH_RETURN_IF_ERROR(ValidateQueue(f, o.queues[i]));
    if (!names.insert(o.queues[i].name).second) {
      return Invalid(f + "name", absl::StrCat("\"", o.queues[i].name,
                                              "\" is used twice; names must be unique"));
    }
  }
  HEARTH_RETURN_IF_ERROR(CheckInt("JobPoolOptions.worker_slots", o.worker_slots, 1, kMaxJobSlots));
  if (o.max_io_depth) {
    HEARTH_RETURN_IF_ERROR(
        CheckInt("JobPoolOptions.max_io_depth", *o.max_io_depth, 1, kMaxJobSlots));
  }
  HEARTH_RETURN_IF_ERROR(CheckPeriod("JobPoolOptions.aging_period", o.aging_period,
                                     absl::ZeroDuration(), kMaxJobPeriod));
  return ValidateGiveBackOptions(o.give_back);
}

absl::StatusOr<ResolvedJob> ResolveJobSpec(const JobSpec& spec, const JobQueueOptions& queue) {
  ResolvedJob job;
  job.priority = spec.priority.value_or(queue.default_priority);
  HEARTH_RETURN_IF_ERROR(CheckInt("JobSpec.priority", job.priority, 0, kMaxJobPriority));
  job.queue_timeout = spec.queue_timeout.value_or(queue.default_queue_timeout);
  HEARTH_RETURN_IF_ERROR(CheckTimeout("JobSpec.queue_timeout", job.queue_timeout));
  job.run_timeout = spec.run_timeout.value_or(queue.default_run_timeout);
  HEARTH_RETURN_IF_ERROR(CheckTimeout("JobSpec.run_timeout", job.run_timeout));
  job.max_retries = spec.max_retries.value_or(queue.retry.max_retries);
  HEARTH_RETURN_IF_ERROR(CheckInt("JobSpec.max_retries", job.max_retries, 0, kMaxJobRetries));
  job.uses_io = spec.uses_io.value_or(queue.jobs_use_io);
  if (spec.label.size() > kMaxJobLabelBytes) {
    return Invalid("JobSpec.label", absl::StrCat("is ", spec.label.size(),
                                                 " bytes; must be at most ", kMaxJobLabelBytes));
  }
  return job;
}

}  // namespace hearth::jobs_internal

// File: src/jobs/options_validation.h
//
// Validation of the job queues' options and of each JobSpec, with messages
// that name the field, its value and what is allowed. Not part of the public
// API.

#ifndef HEARTH_JOBS_OPTIONS_VALIDATION_H_
#define HEARTH_JOBS_OPTIONS_VALIDATION_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hearth/jobs/job_options.h"
#include "hearth/jobs/job_spec.h"

namespace hearth::jobs_internal {

absl::Status ValidatePoolOptions(const JobPoolOptions& options);

// A JobSpec with every default filled in from its queue.
struct ResolvedJob {
  int priority = 0;
  absl::Duration queue_timeout = absl::InfiniteDuration();
  absl::Duration run_timeout = absl::InfiniteDuration();
  int max_retries = 0;
  bool uses_io = false;
};

// Checks `spec`'s own fields (its queue is resolved by the caller) and fills
// the unset ones from `queue`.
absl::StatusOr<ResolvedJob> ResolveJobSpec(const JobSpec& spec,
                                           const JobQueueOptions& queue);

}  // namespace hearth::jobs_internal

#endif  // HEARTH_JOBS_OPTIONS_VALIDATION_H_

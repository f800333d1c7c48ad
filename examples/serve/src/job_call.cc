#include "job_call.h"

namespace hearth::serve::job_call_internal {

absl::Status EndStatus(const JobResult& r) {
  const std::string what = absl::StrCat("job \"", r.label, "\" on queue ", r.queue);
  switch (r.end) {
    case JobEnd::kDone:
      return absl::OkStatus();
    case JobEnd::kFailed:
      // The function's own error: it already says what was wrong.
      return r.status;
    case JobEnd::kTimedOut:
      return absl::DeadlineExceededError(absl::StrCat(what, " timed out: ", r.status.message()));
    case JobEnd::kCancelled:
      return absl::CancelledError(absl::StrCat(what, " was cancelled: ", r.status.message()));
    case JobEnd::kRejected:
      return absl::UnavailableError(absl::StrCat(what, " was not run: ", r.status.message()));
  }
  return absl::InternalError(absl::StrCat(what, " ended in an unknown way"));
}

absl::Status SubmitStatus(const JobSpec& spec, const absl::Status& refused) {
  switch (refused.code()) {
    case absl::StatusCode::kResourceExhausted:
      return absl::ResourceExhaustedError(
          absl::StrCat("the server's ", spec.queue, " job queue is full: ", refused.message()));
    case absl::StatusCode::kFailedPrecondition:
      return absl::UnavailableError(
          absl::StrCat("the server's job queues are shut down: ", refused.message()));
    default:
      // A spec the server built itself was refused: a bug, not the caller's.
      return absl::InternalError(
          absl::StrCat("job queue ", spec.queue, " refused a job: ", refused.message()));
  }
}

}  // namespace hearth::serve::job_call_internal

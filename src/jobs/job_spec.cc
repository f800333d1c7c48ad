#include "hearth/jobs/job_spec.h"

namespace hearth {

std::string_view JobEndName(JobEnd end) {
  switch (end) {
    case JobEnd::kDone:
      return "done";
    case JobEnd::kFailed:
      return "failed";
    case JobEnd::kTimedOut:
      return "timed_out";
    case JobEnd::kCancelled:
      return "cancelled";
    case JobEnd::kRejected:
      return "rejected";
  }
  return "unknown";
}

bool IsRetryableJobError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
      return true;
    default:
      return false;
  }
}

}  // namespace hearth

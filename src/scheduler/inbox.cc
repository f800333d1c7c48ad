#include "scheduler/inbox.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace hearth::internal {

absl::StatusOr<RequestId> Inbox::Submit(RequestSpec spec,
                                        std::vector<uint64_t> prompt_hashes) {
  absl::MutexLock lock(&mu_);
  if (static_cast<int64_t>(live_.size()) >= max_pending_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the scheduler already holds ", live_.size(),
        " unfinished requests (max_pending_requests = ", max_pending_,
        "); retry after some finish"));
  }
  const RequestId id(next_id_++);
  live_.emplace(id, false);
  queued_.emplace(id, true);
  submissions_.push_back(Submission{id, std::move(spec), std::move(prompt_hashes)});
  return id;
}

absl::Status Inbox::Cancel(RequestId id) {
  absl::MutexLock lock(&mu_);
  auto it = live_.find(id);
  if (it == live_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "request ", id.ToString(), " is unknown or already ended; only queued, waiting, "
        "running or swapped requests can be cancelled"));
  }
  if (it->second) {
    return absl::NotFoundError(
        absl::StrCat("request ", id.ToString(), " is already being cancelled"));
  }
  it->second = true;
  cancels_.push_back(id);
  return absl::OkStatus();
}

void Inbox::Drain(std::vector<Submission>* submissions,
                  std::vector<RequestId>* cancels) {
  submissions->clear();
  cancels->clear();
  absl::MutexLock lock(&mu_);
  // Swapping keeps both sides' capacity: no allocation in steady state.
  submissions->swap(submissions_);
  cancels->swap(cancels_);
  for (const Submission& s : *submissions) queued_.erase(s.id);
}

void Inbox::Finish(RequestResult result, bool keep) {
  absl::MutexLock lock(&mu_);
  live_.erase(result.id);
  if (keep) results_.push_back(std::move(result));
}

size_t Inbox::DrainResults(std::vector<RequestResult>* out) {
  absl::MutexLock lock(&mu_);
  const size_t n = results_.size();
  for (RequestResult& r : results_) out->push_back(std::move(r));
  results_.clear();
  return n;
}

bool Inbox::IsQueued(RequestId id) const {
  absl::MutexLock lock(&mu_);
  return queued_.contains(id);
}

int32_t Inbox::num_live() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int32_t>(live_.size());
}

int32_t Inbox::num_queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int32_t>(queued_.size());
}

}  // namespace hearth::internal

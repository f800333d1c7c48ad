#include "scheduler/inbox.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/workflow_table.h"

namespace hearth::internal {

Inbox::Inbox(int32_t max_pending, std::vector<UserConfig> users)
    : max_pending_(max_pending), users_(std::move(users)), per_user_(users_.size()) {}

int64_t Inbox::WindowOf(uint32_t user, absl::Time t) const {
  absl::Duration remainder;
  return absl::IDivDuration(t - absl::UnixEpoch(), users_[user].quota_window, &remainder);
}

absl::StatusOr<RequestId> Inbox::Submit(RequestSpec spec,
                                        std::vector<uint64_t> prompt_hashes) {
  const uint32_t u = spec.user.value();  // Validated by the caller.
  const UserConfig& cfg = users_[u];
  const int64_t tokens = int64_t{spec.prompt_tokens} + spec.max_new_tokens;
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int64_t>(live_.size()) >= max_pending_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the scheduler already holds ", live_.size(),
        " unfinished requests (max_pending_requests = ", max_pending_,
        "); retry after some finish"));
  }
  PerUser& pu = per_user_[u];
  if (cfg.max_queued_requests > 0 && pu.live >= cfg.max_queued_requests) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "user \"", cfg.name, "\" has ", pu.live, " unfinished requests; max_queued_requests is ",
        cfg.max_queued_requests, ". Retry after some finish"));
  }
  const absl::Time when = spec.arrival_time == absl::InfinitePast() ? latest_now_ : spec.arrival_time;
  const int64_t window = WindowOf(u, when);
  if (window > pu.window) {
    pu.window = window;
    pu.used = 0;
  }
  if (cfg.token_quota > 0 && window == pu.window && pu.used + tokens > cfg.token_quota) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "user \"", cfg.name, "\" has used ", pu.used, " of a ", cfg.token_quota,
        "-token quota in the current ", absl::FormatDuration(cfg.quota_window),
        " window and this request needs up to ", tokens,
        " (prompt + max_new_tokens); lower max_new_tokens or wait for the next window"));
  }
  if (spec.parent.valid()) {
    if (spec.parent.value() >= next_id_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RequestSpec.parent is ", spec.parent.ToString(),
          ", an id this scheduler never issued; a parent must be a request submitted earlier"));
    }
    if (auto it = live_.find(spec.parent); it != live_.end() && it->second.user != u) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RequestSpec.parent: ",
          ForeignParentReason(spec.parent, users_[it->second.user].name, cfg.name)));
    }
  }
  const RequestId id(next_id_++);
  pu.live++;
  if (window == pu.window) pu.used += tokens;
  live_.emplace(id, Live{false, u, tokens, window});
  queued_.insert(id);
  submissions_.push_back(Submission{id, std::move(spec), std::move(prompt_hashes)});
  return id;
}

absl::Status Inbox::Cancel(RequestId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(id);
  if (it == live_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "request ", id.ToString(), " is unknown or already ended; only queued, waiting, "
        "running or swapped requests can be cancelled"));
  }
  if (it->second.cancelling) {
    return absl::NotFoundError(
        absl::StrCat("request ", id.ToString(), " is already being cancelled"));
  }
  it->second.cancelling = true;
  cancels_.push_back(id);
  return absl::OkStatus();
}

void Inbox::Drain(absl::Time now, std::vector<Submission>* submissions,
                  std::vector<RequestId>* cancels) {
  submissions->clear();
  cancels->clear();
  std::lock_guard<std::mutex> lock(mu_);
  latest_now_ = now;
  // Swapping keeps both sides' capacity: no allocation in steady state.
  submissions->swap(submissions_);
  cancels->swap(cancels_);
  for (const Submission& s : *submissions) queued_.erase(s.id);
}

void Inbox::Finish(RequestResult result, bool keep) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(result.id);
  if (it != live_.end()) {
    PerUser& pu = per_user_[it->second.user];
    --pu.live;
    // Refund the quota for tokens reserved but never generated.
    if (it->second.window == pu.window) {
      const int64_t used = int64_t{result.prompt_tokens} + result.output_tokens;
      pu.used -= std::max<int64_t>(0, it->second.charged - used);
    }
    live_.erase(it);
  }
  if (keep) results_.push_back(std::move(result));
}

size_t Inbox::DrainResults(std::vector<RequestResult>* out) {
  if (out == nullptr) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = results_.size();
  for (RequestResult& r : results_) out->push_back(std::move(r));
  results_.clear();
  return n;
}

bool Inbox::IsQueued(RequestId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_.contains(id);
}

int32_t Inbox::num_queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(queued_.size());
}

}  // namespace hearth::internal

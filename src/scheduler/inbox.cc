#include "scheduler/inbox.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "scheduler/workflow_table.h"

namespace hearth::internal {

Inbox::Inbox(const SchedulerOptions& options, ModelRegistry& models)
    : models_(models),
      max_intake_(options.max_intake_per_plan),
      keep_results_(!options.on_result),
      users_(options.users),
      classes_(options.work_classes),
      block_size_(options.kv.block_size),
      shares_(options),
      per_user_(users_.size()),
      queues_(users_.size()),
      at_count_limit_(users_.size()) {
  live_per_model_.assign(ModelRegistry::kMaxModels, 0);
  // One call's worth each: every call passes through these lists, and a
  // deferral costs no allocation unless it repeats.
  unsettled_taken_.reserve(static_cast<size_t>(max_intake_));
  unsettled_ended_.reserve(static_cast<size_t>(options.max_running));
  // The engine settles under this table's lock, so it must not stall: sized
  // for the default limit up front, it never rehashes under churn (see
  // ProbingHashMap); a larger limit grows it at new highs only.
  live_.reserve(static_cast<size_t>(std::min(options.max_pending_requests, 1 << 16)));
}

void Inbox::RollWindow(uint32_t user, absl::Time t) {
  absl::Duration remainder;
  const int64_t window =
      absl::IDivDuration(t - absl::UnixEpoch(), users_[user].quota_window, &remainder);
  PerUser& pu = per_user_[user];
  if (window > pu.window) {
    pu.window = window;
    pu.used = 0;
  }
}

absl::Status Inbox::CheckCount(uint32_t user, int32_t count) {
  absl::Status s = shares_.CanAddRequest(user, count);
  const UserConfig& cfg = users_[user];
  const int64_t live = shares_.requests_of(user);
  if (s.ok() && cfg.max_queued_requests > 0 && live + count > cfg.max_queued_requests) {
    s = absl::ResourceExhaustedError(absl::StrCat(
        "user \"", cfg.name, "\" has ", live, " unfinished requests; max_queued_requests is ",
        cfg.max_queued_requests, ". Retry after some finish"));
  }
  // Until a request ends, the same answer holds for any request of this
  // user (not after a group too large for the room a single one still has).
  if (!s.ok() && (count == 1 || !CheckCount(user, 1).ok())) {
    at_count_limit_[user].store(true, std::memory_order_relaxed);
  }
  return s;
}

absl::Status Inbox::CheckQuota(uint32_t user, int64_t tokens) {
  const UserConfig& cfg = users_[user];
  PerUser& pu = per_user_[user];
  if (cfg.token_quota == 0) return absl::OkStatus();
  // Judged against the window of the latest Plan: the scheduler has no clock,
  // and a stamped arrival time is the submitter's word, not evidence.
  RollWindow(user, latest_now_);
  // By subtraction: used + untaken never exceeds the quota, which may be
  // near INT64_MAX.
  if (tokens > cfg.token_quota - (pu.used + pu.untaken)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "user \"", cfg.name, "\" has used ", pu.used + pu.untaken, " of a ", cfg.token_quota,
        "-token quota in the current ", absl::FormatDuration(cfg.quota_window),
        " window and this request needs up to ", tokens,
        " (prompt + max_new_tokens); lower max_new_tokens or wait for the next window"));
  }
  return absl::OkStatus();
}

absl::Status Inbox::CheckAcceptable(const RequestSpec& spec, int64_t tokens, int64_t bytes) {
  const uint32_t u = spec.user.value();
  const int32_t n = spec.num_samples;
  // The caller validated the model before the lock; RemoveModel may have
  // come between (it marks the model removed under this lock).
  if (models_.Get(spec.model)->removed.load(std::memory_order_relaxed)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RequestSpec.model ", spec.model.ToString(), " was removed (Scheduler::RemoveModel)"));
  }
  if (absl::Status s = CheckCount(u, n); !s.ok()) return s;
  if (absl::Status s = shares_.CanAddBytes(u, bytes * n); !s.ok()) return s;
  if (absl::Status s = CheckQuota(u, tokens * n); !s.ok()) return s;
  if (!spec.parent.valid()) return absl::OkStatus();
  if (spec.parent.value() >= next_id_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RequestSpec.parent is ", spec.parent.ToString(),
        ", an id this scheduler never issued; a parent must be a request submitted earlier"));
  }
  if (const Live* parent = live_.find(spec.parent); parent != nullptr && parent->user != u) {
    return absl::InvalidArgumentError(
        absl::StrCat("RequestSpec.parent: ", ForeignParentReason(spec.parent, users_[u].name)));
  }
  return absl::OkStatus();
}

absl::StatusOr<RequestId> Inbox::Submit(RequestSpec spec, std::vector<uint64_t> prompt_hashes,
                                        const ChainScope& scope) {
  const uint32_t u = spec.user.value();  // Validated by the caller.
  // A group of samples is n requests, checked and queued as one.
  const int32_t n = spec.num_samples;
  const int64_t tokens = int64_t{spec.prompt_tokens} + spec.max_new_tokens;
  const int64_t bytes = PendingBytes(spec);
  // A member retrying as fast as it can must not contend for the lock that
  // Plan takes: once refused by count, it is refused here until some request
  // ends.
  if (at_count_limit_[u].load(std::memory_order_relaxed)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "user \"", users_[u].name, "\" was refused for holding too many unfinished requests "
        "(its part of max_pending_requests, or max_queued_requests) and none has ended since; "
        "retry after some finish"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = CheckAcceptable(spec, tokens, bytes); !s.ok()) return s;
  const uint32_t model = spec.model.value();
  const RequestId first(next_id_);
  for (int32_t k = 0; k < n; ++k) {
    const RequestId id(next_id_++);
    PerUser& pu = per_user_[u];
    pu.untaken += tokens;
    shares_.Add(u, bytes);
    // Only sample 0 is the host's to hold; the others wait for its prompt.
    ++live_per_model_[model];
    live_.try_emplace(id, Live{.user = u,
                              .model = model,
                              .charged = tokens,
                              .bytes = bytes,
                              .max_tokens = int64_t{spec.prompt_tokens} + spec.max_new_tokens,
                              .held = spec.hold && k == 0,
                              .group = n > 1 ? first : RequestId(),
                              .group_size = n});
    RequestSpec sample = k + 1 < n ? spec : std::move(spec);
    sample.handle += static_cast<uint64_t>(k);
    if (k > 0) sample.hold = false;
    // Under mu_ still, so that per-user ids reach the queue in order and the
    // audit never sees a live request that is neither queued nor taken.
    queues_.Push(u, Submission{.id = id,
                               .spec = std::move(sample),
                               .prompt_block_hashes =
                                   k + 1 < n ? prompt_hashes : std::move(prompt_hashes),
                               .chain_scope = scope,
                               .sample_index = k,
                               .cancelled = false,
                               .cancel_reason = {}});
  }
  WakeLocked();
  return first;
}

absl::Status Inbox::Cancel(RequestId id, std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  Live* live = live_.find(id);
  if (live == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "request ", id.ToString(), " is unknown or already ended; only queued, waiting, "
        "running or swapped requests can be cancelled"));
  }
  if (live->cancelling) {
    return absl::NotFoundError(
        absl::StrCat("request ", id.ToString(), " is already being cancelled"));
  }
  if (live->group_size > 1) {
    // A group of samples is cancelled as a unit: every sample still live.
    const RequestId first = live->group;
    const int32_t size = live->group_size;
    for (int32_t k = 0; k < size; ++k) {
      const RequestId sample(first.value() + static_cast<uint64_t>(k));
      if (Live* s = live_.find(sample); s != nullptr && !s->cancelling) CancelLocked(*s, sample, reason);
    }
    WakeLocked();
    return absl::OkStatus();
  }
  CancelLocked(*live, id, reason);
  WakeLocked();
  return absl::OkStatus();
}

void Inbox::CancelLocked(Live& live, RequestId id, std::string_view reason) {
  live.cancelling = true;
  // A queued request carries its cancellation into the Plan that takes it in.
  if (!queues_.MarkCancelled(live.user, id, reason)) {
    cancels_.push_back(Cancellation{id, std::string(reason)});
    has_changes_.store(true, std::memory_order_release);
  }
}

absl::Status Inbox::Change(const RequestChange& change) {
  std::lock_guard<std::mutex> lock(mu_);
  Live* live = live_.find(change.id);
  if (live == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "request ", change.id.ToString(), " is unknown or already ended; only queued, "
        "preparing, waiting, running or swapped requests can be changed"));
  }
  if (live->cancelling) {
    return absl::NotFoundError(
        absl::StrCat("request ", change.id.ToString(), " is being cancelled"));
  }
  if (change.work_class) {
    // As Submit refuses such a request: it would wait forever.
    const WorkClassConfig& cls = classes_[change.work_class->value()];
    const int64_t budget = int64_t{cls.kv_block_budget} * block_size_;
    if (!cls.borrow && budget > 0 && live->max_tokens > budget) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", change.id.ToString(), " may hold ", live->max_tokens,
          " tokens (prompt_tokens + max_new_tokens), more than class \"", cls.name,
          "\" may ever hold (a hard kv_block_budget of ", cls.kv_block_budget, " blocks = ",
          budget, " tokens); it could never run there"));
    }
  }
  QueueChangeLocked(*live, change);
  return absl::OkStatus();
}

absl::Status Inbox::Release(RequestId id) {
  std::lock_guard<std::mutex> lock(mu_);
  Live* live = live_.find(id);
  if (live == nullptr || live->cancelling) {
    return absl::NotFoundError(absl::StrCat(
        "request ", id.ToString(), " is unknown, already ended or being cancelled; only a "
        "held request can be released"));
  }
  if (!live->held) {
    return absl::FailedPreconditionError(absl::StrCat(
        "request ", id.ToString(), " is not held: it was submitted without "
        "RequestSpec::hold, or was released already"));
  }
  live->held = false;
  RequestChange release;
  release.id = id;
  release.release = true;
  QueueChangeLocked(*live, release);
  return absl::OkStatus();
}

void Inbox::QueueChangeLocked(Live& live, const RequestChange& change) {
  if (queues_.ApplyChange(live.user, change.id, change.priority, change.work_class,
                          change.release)) {
    // Queued: the change is in the submission itself.
  } else if (live.change_index >= 0) {
    RequestChange& pending = changes_[static_cast<size_t>(live.change_index)];
    if (change.priority) pending.priority = change.priority;
    if (change.work_class) pending.work_class = change.work_class;
    pending.release = pending.release || change.release;
  } else {
    live.change_index = static_cast<int32_t>(changes_.size());
    changes_.push_back(change);
    has_changes_.store(true, std::memory_order_release);
  }
  WakeLocked();
}

void Inbox::WakeLocked() {
  woken_ = true;
  // Cheap when the engine is not waiting (no waiter, no system call).
  work_cv_.notify_one();
}

absl::StatusOr<ModelId> Inbox::AddModel(ModelConfig config, int32_t base) {
  std::lock_guard<std::mutex> lock(mu_);
  if (base >= 0 && models_.Get(ModelId(static_cast<uint32_t>(base)))->removed.load()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "base model \"", config.base_model, "\" was removed while the adapter was being added"));
  }
  return models_.Append(std::move(config), base);
}

absl::Status Inbox::RemoveModel(ModelId m) {
  std::lock_guard<std::mutex> lock(mu_);
  const ModelEntry* entry = models_.Get(m);
  if (entry == nullptr || entry->removed.load()) {
    return absl::NotFoundError(absl::StrCat(
        "model ", m.ToString(), entry == nullptr ? " was never registered" : " is already removed"));
  }
  if (const int32_t live = live_per_model_[m.value()]; live > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model \"", entry->config.name, "\" has ", live,
        " requests not ended (queued, held, waiting, running or swapped, or ended in a call "
        "whose results are not settled yet); cancel them or wait for their results"));
  }
  const int32_t n = models_.size();
  for (int32_t i = 0; i < n; ++i) {
    const ModelEntry* a = models_.Get(ModelId(static_cast<uint32_t>(i)));
    if (a->base == static_cast<int32_t>(m.value()) && !a->removed.load()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "model \"", entry->config.name, "\" is the base of adapter \"", a->config.name,
          "\"; remove its adapters first"));
    }
  }
  models_.MarkRemoved(m);
  WakeLocked();  // The engine unloads its weights at its next plan.
  return absl::OkStatus();
}

void Inbox::Wake() {
  std::lock_guard<std::mutex> lock(mu_);
  WakeLocked();
}

bool Inbox::WaitForWork(absl::Time deadline, bool engine_busy) {
  // The engine is idle here, so it may wait for the lock like a host.
  unsettled_calls_ = kMaxUnsettledCalls;
  LockToSettle();
  std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
  const auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return engine_busy || woken_ || queues_.size() > 0;
  };
  bool work = ready();
  if (!work && deadline == absl::InfiniteFuture()) {
    work_cv_.wait(lock, ready);
    work = true;
  } else if (!work && deadline > absl::Now()) {
    work = work_cv_.wait_until(lock, absl::ToChronoTime(deadline), ready);
  }
  woken_ = false;
  return work;
}

void Inbox::SettleTaken(RequestId id, absl::Time now) {
  Live& live = *live_.find(id);
  PerUser& pu = per_user_[live.user];
  RollWindow(live.user, now);
  pu.untaken -= live.charged;
  pu.used += live.charged;
  live.window = pu.window;
}

void Inbox::SettleEnded(RequestResult& result) {
  if (const Live* found = live_.find(result.id); found != nullptr) {
    const Live live = *found;
    PerUser& pu = per_user_[live.user];
    shares_.Remove(live.user, live.bytes);
    --live_per_model_[live.model];
    // Refund the quota for tokens reserved but never generated.
    if (live.window == pu.window) {
      const int64_t used = int64_t{result.prompt_tokens} + result.output_tokens;
      pu.used -= std::max<int64_t>(0, live.charged - used);
    }
    live_.erase(result.id);
  }
  if (keep_results_) results_.push_back(std::move(result));
}

bool Inbox::LockToSettle() {
  if (unsettled_calls_ >= kMaxUnsettledCalls) {
    mu_.lock();
  } else if (!TryLockBriefly(mu_)) {
    ++unsettled_calls_;
    return false;
  }
  // Takes first: a request may have been taken in and ended since.
  for (const Taken& t : unsettled_taken_) SettleTaken(t.id, t.now);
  unsettled_taken_.clear();
  for (RequestResult& result : unsettled_ended_) SettleEnded(result);
  if (!unsettled_ended_.empty()) {
    for (std::atomic<bool>& blocked : at_count_limit_) blocked.store(false, std::memory_order_relaxed);
  }
  unsettled_ended_.clear();
  unsettled_calls_ = 0;
  return true;
}

void Inbox::Drain(absl::Time now, std::vector<Submission>* submissions,
                  std::vector<RequestChange>* changes, std::vector<Cancellation>* cancels) {
  submissions->clear();
  changes->clear();
  cancels->clear();
  queues_.TakeTurns(max_intake_, submissions);
  for (const Submission& sub : *submissions) unsettled_taken_.push_back(Taken{sub.id, now});
  if (!LockToSettle()) return;
  std::lock_guard<std::mutex> lock(mu_, std::adopt_lock);
  latest_now_ = now;
  // Swapping keeps both sides' capacity: no allocation in steady state.
  for (const RequestChange& c : changes_) {
    if (Live* live = live_.find(c.id)) live->change_index = -1;
  }
  changes->swap(changes_);
  cancels->swap(cancels_);
  has_changes_.store(false, std::memory_order_release);
}

void Inbox::Finish(std::vector<RequestResult>* ended) {
  if (ended->empty()) return;
  for (RequestResult& result : *ended) unsettled_ended_.push_back(std::move(result));
  ended->clear();
  if (LockToSettle()) mu_.unlock();
}

size_t Inbox::DrainResults(std::vector<RequestResult>* out) {
  if (out == nullptr) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = results_.size();
  for (RequestResult& r : results_) out->push_back(std::move(r));
  results_.clear();
  return n;
}

absl::Status Inbox::Audit(size_t taken_in) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = shares_.Audit(); !s.ok()) return s;
  std::vector<int64_t> live_of(per_user_.size(), 0);
  std::vector<int32_t> of_model(live_per_model_.size(), 0);
  for (const auto& [id, l] : live_) {
    ++live_of[l.user];
    ++of_model[l.model];
  }
  if (of_model != live_per_model_) {
    return absl::InternalError("inbox: the per-model counts of live requests disagree with them");
  }
  size_t queued = 0;
  for (uint32_t u = 0; u < per_user_.size(); ++u) {
    queued += queues_.SizeOf(u);
    if (live_of[u] != shares_.requests_of(u)) {
      return absl::InternalError(absl::StrCat("inbox: user ", u, " has ", live_of[u],
                                              " live requests, the shares count ",
                                              shares_.requests_of(u)));
    }
  }
  // An ended request stays live here until its end is settled.
  if (static_cast<int32_t>(queued) != queues_.size() ||
      live_.size() - queued != taken_in + unsettled_ended_.size()) {
    return absl::InternalError(absl::StrCat(
        "inbox: ", live_.size(), " live requests; ", queued, " in queues, ", queues_.size(),
        " counted; ", taken_in, " taken in by the engine, ", unsettled_ended_.size(),
        " ended and not yet settled"));
  }
  return absl::OkStatus();
}

bool Inbox::IsQueued(RequestId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Live* live = live_.find(id);
  return live != nullptr && queues_.Contains(live->user, id);
}

}  // namespace hearth::internal

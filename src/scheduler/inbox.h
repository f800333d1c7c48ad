// File: src/scheduler/inbox.h
//
// The only state shared between host threads and the engine thread: accepted
// submissions not yet seen by Plan() (SubmissionQueues), the live request ids
// (so Cancel can answer NotFound at once) with what each holds against the
// intake limits, cancellations, and terminal results waiting for
// DrainResults().
//
// Host threads may wait on the engine, never the reverse. The bookkeeping
// lock is held by Submit and Cancel on host threads, and a host thread can be
// switched out while holding it; so the engine only tries it, briefly, and
// when it is busy records what it took in and what ended and settles both at
// its next call that gets the lock (every kMaxUnsettledCalls calls at the
// latest, when it does wait). Until then a request that ended still counts
// against its user's limits and its result waits: late, never lost.

#ifndef HEARTH_SCHEDULER_INBOX_H_
#define HEARTH_SCHEDULER_INBOX_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"
#include "hearth/scheduler/scheduler_options.h"
#include "internal/probing_hash_map.h"
#include "scheduler/model_registry.h"
#include "scheduler/pending_shares.h"
#include "scheduler/submission_queues.h"

namespace hearth::internal {

// A host's Cancel of a request already taken in, waiting for the engine.
struct Cancellation {
  RequestId id;
  std::string reason;
};

// A host's SetPriority or SetWorkClass of a request already taken in,
// waiting for the engine; what is unset stays as it is.
struct RequestChange {
  RequestId id;
  std::optional<int32_t> priority;
  std::optional<WorkClassId> work_class;
  // Scheduler::Release of a held request.
  bool release = false;
};

class Inbox {
 public:
  // `models` outlives the inbox; it validates and adds models under the
  // inbox's lock, so that no Submit slips in between RemoveModel's check and
  // its removal.
  Inbox(const SchedulerOptions& options, ModelRegistry& models);

  // Assigns an id and queues the submission (a group of num_samples
  // consecutive ids and submissions, accepted or refused whole; the first
  // id is returned). ResourceExhausted when the
  // request would cross the user's part of max_pending_requests or
  // max_pending_bytes (PendingShares), the user's max_queued_requests, or
  // their token quota in the window of the latest Drain.
  // `prompt_hashes` and `scope`: the prompt's chain and where its cache
  // scopes enter it (the scheduler resolves both before).
  absl::StatusOr<RequestId> Submit(RequestSpec spec, std::vector<uint64_t> prompt_hashes,
                                   const ChainScope& scope = {});
  // NotFound unless `id` is live and not already being cancelled. Wakes
  // WaitForWork.
  absl::Status Cancel(RequestId id, std::string_view reason = {});
  // NotFound like Cancel; InvalidArgument for a class whose hard KV budget
  // could never hold the request (as Submit would say). A queued request's
  // submission is changed in place; any other change waits for the engine
  // (Drain). Wakes WaitForWork. The class id must be registered.
  absl::Status Change(const RequestChange& change);
  // NotFound like Cancel; FailedPrecondition unless the request was
  // submitted held and not released yet. A queued request's submission
  // loses its hold in place; any other release waits for the engine, merged
  // with its other changes. Wakes WaitForWork.
  absl::Status Release(RequestId id);

  // Any thread. Registers `config` (validated and normalised by the
  // caller, serialising additions and removals) with its base's id (-1 for
  // a base model); ResourceExhausted when the registry is full,
  // FailedPrecondition if the base was removed since the caller checked.
  absl::StatusOr<ModelId> AddModel(ModelConfig config, int32_t base);
  // Any thread. FailedPrecondition while a request of `m` is live here
  // (submitted and not settled as ended) or an adapter of it is
  // registered; NotFound for an unknown or removed model. Wakes
  // WaitForWork so that the engine can unload it.
  absl::Status RemoveModel(ModelId m);

  // Any thread: makes WaitForWork return true (now, or at its next call).
  void Wake();

  // Engine thread. Settles what earlier calls left unsettled (waiting for the
  // lock), then returns true at once if `engine_busy` or a submission is
  // queued, or a Submit, Cancel or Wake came since the last WaitForWork
  // returned; otherwise sleeps until one comes (true) or wall-clock time
  // reaches `deadline` (false).
  bool WaitForWork(absl::Time deadline, bool engine_busy);

  // Engine thread. Moves up to max_intake_per_plan queued submissions into
  // the (cleared) `submissions` (SubmissionQueues::TakeTurns: users share the
  // budget, each user's in submission order), and changes and cancellations
  // of requests already taken in into the (cleared) `changes` and `cancels`
  // (those made since the last call that settled), each in the order made. A
  // submission cancelled while queued comes marked `cancelled`. Taken
  // submissions are charged to the quota window of `now`.
  void Drain(absl::Time now, std::vector<Submission>* submissions,
             std::vector<RequestChange>* changes, std::vector<Cancellation>* cancels);

  // Engine thread. These requests are terminal: forget them and, unless the
  // host takes results through on_result, queue them for DrainResults.
  // Clears `ended`, keeping its capacity.
  void Finish(std::vector<RequestResult>* ended);
  size_t DrainResults(std::vector<RequestResult>* out);

  // Engine thread, between engine calls. Internal unless the per-user counts,
  // the pending shares and the queues agree, and the live requests not queued
  // are `taken_in` (the engine's live records) and the ends not yet settled.
  // O(live requests).
  absl::Status Audit(size_t taken_in) const;

  // Engine thread; true for a request submitted and not yet taken in.
  bool IsQueued(RequestId id) const;
  int32_t num_queued() const { return queues_.size(); }
  // Any thread; true while a cancel or change waits for the next Drain.
  bool has_changes() const { return has_changes_.load(std::memory_order_acquire); }

  // Engine calls in a row that may leave their bookkeeping unsettled before
  // one waits for the lock. Bounds how late a result can be, and how much
  // the unsettled lists hold (max_intake_per_plan per call, plus ends).
  static constexpr int kMaxUnsettledCalls = 16;

 private:
  // Holds mu_ from a test's "host" thread, to exercise the engine's deferral.
  friend class InboxTestPeer;
  struct Live {
    uint32_t user = 0;
    uint32_t model = 0;
    bool cancelling = false;
    // Its change in changes_, or -1: repeated changes before the engine
    // drains them merge into one, so changes_ never outgrows live_.
    int32_t change_index = -1;
    // Quota tokens charged and the window they were charged to (set when
    // Drain takes the request in).
    int64_t charged = 0;
    int64_t window = 0;
    int64_t bytes = 0;
    // prompt_tokens + max_new_tokens: what its KV may grow to.
    int64_t max_tokens = 0;
    // Submitted with RequestSpec::hold and not released yet.
    bool held = false;
    // Parallel sampling: the group's first id and its size (1: no group).
    RequestId group;
    int32_t group_size = 1;
  };
  struct PerUser {
    int64_t window = 0;
    int64_t used = 0;
    // Quota tokens submitted but not yet taken in, so charged to no window.
    int64_t untaken = 0;
  };
  struct Taken {
    RequestId id;
    absl::Time now;
  };
  // Whether `spec` (a group of spec.num_samples requests, each of `tokens`
  // quota tokens and `bytes` pending bytes) may be queued: its model not
  // removed, its user's count, bytes and quota, its parent.
  absl::Status CheckAcceptable(const RequestSpec& spec, int64_t tokens, int64_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `count` more requests of `user` fit its limits.
  absl::Status CheckCount(uint32_t user, int32_t count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks `live` (request `id`) cancelling and queues its cancellation.
  void CancelLocked(Live& live, RequestId id, std::string_view reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckQuota(uint32_t user, int64_t tokens) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RollWindow(uint32_t user, absl::Time t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Charges a request taken in at `now` to the quota window of `now`.
  void SettleTaken(RequestId id, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees what an ended request held and queues its result.
  void SettleEnded(RequestResult& result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Settles everything taken in and ended so far, this call's included; waits
  // for the lock only when kMaxUnsettledCalls calls in a row could not
  // settle. True with mu_ held; false (not held) when this call could not.
  bool LockToSettle() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true, mu_);
  void WakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies `change` to the queued submission or files it for the engine.
  void QueueChangeLocked(Live& live, const RequestChange& change)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ModelRegistry& models_;
  const int32_t max_intake_;
  const bool keep_results_;
  const std::vector<UserConfig> users_;
  const std::vector<WorkClassConfig> classes_;
  const int32_t block_size_;
  // A std::mutex rather than absl::Mutex: Debian's prebuilt Abseil is not
  // built with ThreadSanitizer annotations, so TSan cannot see absl::Mutex's
  // ordering and reports false races; pthread mutexes it intercepts.
  mutable std::mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::Time latest_now_ ABSL_GUARDED_BY(mu_) = absl::UnixEpoch();
  PendingShares shares_ ABSL_GUARDED_BY(mu_);
  // Per model id: live requests (what RemoveModel waits for).
  std::vector<int32_t> live_per_model_ ABSL_GUARDED_BY(mu_);
  ProbingHashMap<RequestId, Live> live_ ABSL_GUARDED_BY(mu_);
  std::vector<PerUser> per_user_ ABSL_GUARDED_BY(mu_);
  SubmissionQueues queues_;
  // Per user: refused by count since the last request ended. Written under
  // mu_, read without it by Submit's fast refusal.
  std::vector<std::atomic<bool>> at_count_limit_;
  std::vector<Cancellation> cancels_ ABSL_GUARDED_BY(mu_);
  std::vector<RequestChange> changes_ ABSL_GUARDED_BY(mu_);
  // !cancels_.empty() || !changes_.empty(), readable without mu_.
  std::atomic<bool> has_changes_{false};
  // A Submit, Cancel or Wake since WaitForWork last returned; WaitForWork
  // sleeps on `work_cv_` until it is set.
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  std::condition_variable work_cv_;
  std::vector<RequestResult> results_ ABSL_GUARDED_BY(mu_);
  // Engine thread only: taken in, and ended, but not yet settled (each call
  // adds its own, then settles all if it gets the lock), and how many engine
  // calls in a row could not settle.
  std::vector<Taken> unsettled_taken_;
  std::vector<RequestResult> unsettled_ended_;
  int unsettled_calls_ = 0;
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_INBOX_H_

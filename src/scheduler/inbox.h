// File: src/scheduler/inbox.h
//
// The only state shared between host threads and the engine thread: accepted
// submissions and cancellations not yet seen by Plan(), the live request ids
// (so Cancel can answer NotFound at once) with what each holds against the
// intake limits, and terminal results waiting for DrainResults(). One mutex
// guards it all; a critical section is O(1), or for Drain bounded by
// max_intake_per_plan, so host threads never wait long on the engine.

#ifndef HEARTH_SCHEDULER_INBOX_H_
#define HEARTH_SCHEDULER_INBOX_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"
#include "hearth/scheduler/scheduler_options.h"
#include "scheduler/pending_shares.h"

namespace hearth::internal {

struct Submission {
  RequestId id;
  RequestSpec spec;
  // Chain hashes of the prompt's full blocks, computed on the submitting
  // thread so the engine thread does not pay for hashing.
  std::vector<uint64_t> prompt_block_hashes;
  // Cancelled before Plan took it in: it ends as soon as it is.
  bool cancelled = false;
};

class Inbox {
 public:
  explicit Inbox(const SchedulerOptions& options);

  // Assigns an id and queues the submission. ResourceExhausted when the
  // request would cross the user's part of max_pending_requests or
  // max_pending_bytes (PendingShares), the user's max_queued_requests, or
  // their token quota in the window of the latest Drain.
  absl::StatusOr<RequestId> Submit(RequestSpec spec,
                                   std::vector<uint64_t> prompt_hashes);
  // NotFound unless `id` is live and not already being cancelled.
  absl::Status Cancel(RequestId id);

  // Moves up to max_intake_per_plan queued submissions into the (cleared)
  // `submissions`, users taking turns one at a time, each user's in its
  // submission order; and every cancellation of a request already taken in
  // into the (cleared) `cancels`. Taken submissions are charged to the quota
  // window of `now`.
  void Drain(absl::Time now, std::vector<Submission>* submissions,
             std::vector<RequestId>* cancels);

  // These requests are terminal: forget them and, unless `keep` is false,
  // queue their results for DrainResults. Clears `ended`, keeping its
  // capacity.
  void Finish(std::vector<RequestResult>* ended, bool keep);
  size_t DrainResults(std::vector<RequestResult>* out);

  // Internal if the per-user counts, the pending shares and the queues
  // agree, and `taken_in` (the engine's live records, between engine calls)
  // equals the live requests not queued. O(live requests).
  absl::Status Audit(size_t taken_in) const;

  bool IsQueued(RequestId id) const;
  int32_t num_queued() const;

 private:
  struct Live {
    uint32_t user = 0;
    bool queued = true;
    bool cancelling = false;
    // Quota tokens charged and the window they were charged to (set when
    // Drain takes the request in).
    int64_t charged = 0;
    int64_t window = 0;
    int64_t bytes = 0;
  };
  struct PerUser {
    int64_t window = 0;
    int64_t used = 0;
    // Quota tokens submitted but not yet taken in, so charged to no window.
    int64_t untaken = 0;
    // Chunked, so that neither a growing backlog (under the lock Plan waits
    // on) nor a draining one ever moves the whole queue, and memory follows
    // the backlog.
    std::deque<Submission> queue;
  };
  absl::Status CheckCount(uint32_t user) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckQuota(uint32_t user, int64_t tokens) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RollWindow(uint32_t user, absl::Time t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TakeOne(uint32_t user, absl::Time now, std::vector<Submission>* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int32_t max_intake_;
  const std::vector<UserConfig> users_;
  // A std::mutex rather than absl::Mutex: Debian's prebuilt Abseil is not
  // built with ThreadSanitizer annotations, so TSan cannot see absl::Mutex's
  // ordering and reports false races; pthread mutexes it intercepts.
  mutable std::mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::Time latest_now_ ABSL_GUARDED_BY(mu_) = absl::UnixEpoch();
  PendingShares shares_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<RequestId, Live> live_ ABSL_GUARDED_BY(mu_);
  std::vector<PerUser> per_user_ ABSL_GUARDED_BY(mu_);
  // Users with queued submissions, in the order they take their next turn.
  std::vector<uint32_t> turns_ ABSL_GUARDED_BY(mu_);
  int32_t num_queued_ ABSL_GUARDED_BY(mu_) = 0;
  // Per user: refused by count since the last request ended. Written under
  // mu_, read without it by Submit's fast refusal.
  std::vector<std::atomic<bool>> at_count_limit_;
  std::vector<RequestId> cancels_ ABSL_GUARDED_BY(mu_);
  std::vector<RequestResult> results_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_INBOX_H_

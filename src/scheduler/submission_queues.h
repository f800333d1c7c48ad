// File: src/scheduler/submission_queues.h
//
// The hand-over of accepted submissions from host threads to the engine
// thread: one queue per user, each behind its own mutex, and the engine's
// turn order over the users that have work queued.
//
// Why per user: the engine must never wait on a host thread. A host thread
// can be switched out by the OS while it holds a lock (on a busy machine for
// a whole 4 ms tick), and an engine blocked behind it stalls every member's
// step. Here the engine only ever try-locks: a user whose queue is locked
// right now skips its turn for this Plan, so a member's submitting thread can
// delay that member's own intake and nobody else's.
//
// Thread-safety: Push from any thread; everything else from the engine
// thread only (TakeTurns keeps the turn order unlocked, as engine state).

#ifndef HEARTH_SCHEDULER_SUBMISSION_QUEUES_H_
#define HEARTH_SCHEDULER_SUBMISSION_QUEUES_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_spec.h"
#include "kv/chain_scope.h"

namespace hearth::internal {

struct Submission {
  RequestId id;
  RequestSpec spec;
  // Chain hashes of the prompt's full blocks, computed on the submitting
  // thread so the engine thread does not pay for hashing.
  std::vector<uint64_t> prompt_block_hashes;
  // Where its cache scopes enter that chain (RequestSpec::cache_scope).
  ChainScope chain_scope;
  // Parallel sampling: its index in the group (spec.num_samples > 1); the
  // group's first id is id - sample_index.
  int32_t sample_index = 0;
  // Cancelled before Plan took it in: it ends as soon as it is, with the
  // host's reason (Scheduler::Cancel).
  bool cancelled = false;
  std::string cancel_reason;
};

// Tries `mu` for a few microseconds (longer than any critical section of a
// thread that is running) without ever sleeping; true when it is held.
bool TryLockBriefly(std::mutex& mu);

class SubmissionQueues {
 public:
  explicit SubmissionQueues(size_t num_users);

  // Queues `sub` behind the user's earlier submissions; ids must increase
  // per user. Waits only for the engine's brief hold of this user's queue.
  void Push(uint32_t user, Submission sub);

  // Moves up to `budget` submissions into `out` (appending), the users with
  // work queued sharing the budget evenly and taking remainders in turn from
  // one call to the next; each user's in submission order. Never blocks.
  void TakeTurns(int32_t budget, std::vector<Submission>* out);

  // Marks `user`'s submission `id` cancelled, for `reason`, if it is still
  // queued; false when the engine has taken it already. O(log queue).
  bool MarkCancelled(uint32_t user, RequestId id, std::string_view reason = {});
  // Applies a SetPriority/SetWorkClass/Release to `user`'s submission `id`
  // if it is still queued (what is unset stays); false when the engine has
  // taken it already. O(log queue).
  bool ApplyChange(uint32_t user, RequestId id, std::optional<int32_t> priority,
                   std::optional<WorkClassId> work_class, bool release = false);
  // Whether `user`'s submission `id` is still queued.
  bool Contains(uint32_t user, RequestId id) const;

  // Submissions queued in all.
  int32_t size() const { return size_.load(std::memory_order_relaxed); }
  // Submissions queued by `user`; locks that user's queue.
  size_t SizeOf(uint32_t user) const;

 private:
  // Holds a user's lock from a test's "host" thread.
  friend class SubmissionQueuesTestPeer;
  struct UserQueue {
    mutable std::mutex mu;
    // Sorted by id: pushed in increasing id order, taken from the front.
    std::deque<Submission> queue ABSL_GUARDED_BY(mu);
    // In the engine's turns or in `ready_`, so listed exactly once.
    bool listed ABSL_GUARDED_BY(mu) = false;
  };
  // Takes up to `n` of `user`'s submissions; false if its queue was busy.
  // Sets *emptied when the user has nothing left queued (and so leaves the
  // turns).
  bool TakeFrom(uint32_t user, int32_t n, std::vector<Submission>* out, int32_t* taken,
                bool* emptied);
  void AdmitReadyUsers();
  // The queued submission `id` of `q`, or null.
  static Submission* Locate(std::deque<Submission>& queue, RequestId id);

  std::unique_ptr<UserQueue[]> users_;
  std::atomic<int32_t> size_{0};
  // Users whose queue went from empty to non-empty since the engine last
  // looked, in that order.
  std::mutex ready_mu_;
  std::vector<uint32_t> ready_ ABSL_GUARDED_BY(ready_mu_);
  // Engine thread only: users with work queued, in turn order, and a scratch
  // copy of ready_ taken under its lock.
  std::vector<uint32_t> turns_;
  std::vector<uint32_t> arrivals_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_SUBMISSION_QUEUES_H_

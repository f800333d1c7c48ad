// File: src/scheduler/inbox.h
//
// The only state shared between host threads and the engine thread: accepted
// submissions and cancellations not yet seen by Plan(), the set of live
// request ids (so Cancel can answer NotFound at once), and terminal results
// waiting for DrainResults(). One mutex guards it all; every critical section
// is O(1) or a buffer swap, so host threads never wait on a planning step.

#ifndef HEARTH_SCHEDULER_INBOX_H_
#define HEARTH_SCHEDULER_INBOX_H_

#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth::internal {

struct Submission {
  RequestId id;
  RequestSpec spec;
  // Chain hashes of the prompt's full blocks, computed on the submitting
  // thread so the engine thread does not pay for hashing.
  std::vector<uint64_t> prompt_block_hashes;
};

class Inbox {
 public:
  Inbox(int32_t max_pending, std::vector<UserConfig> users);

  // Assigns an id and queues the submission. ResourceExhausted when
  // max_pending requests are live, or the user is at max_queued_requests or
  // would exceed their token quota in the current window.
  absl::StatusOr<RequestId> Submit(RequestSpec spec,
                                   std::vector<uint64_t> prompt_hashes);
  // NotFound unless `id` is live and not already being cancelled.
  absl::Status Cancel(RequestId id);

  // Moves pending submissions and cancellations into the (cleared) outputs.
  // `now` (the Plan's time) places quota windows for requests submitted
  // without an arrival time.
  void Drain(absl::Time now, std::vector<Submission>* submissions,
             std::vector<RequestId>* cancels);

  // The request is terminal: forget it and, unless `keep` is false, queue the
  // result for DrainResults.
  void Finish(RequestResult result, bool keep);
  size_t DrainResults(std::vector<RequestResult>* out);

  bool IsQueued(RequestId id) const;
  int32_t num_queued() const;

 private:
  struct Live {
    bool cancelling = false;
    uint32_t user = 0;
    // Quota tokens charged at Submit and the window they were charged to.
    int64_t charged = 0;
    int64_t window = 0;
  };
  struct PerUser {
    int32_t live = 0;
    int64_t window = 0;
    int64_t used = 0;
  };
  int64_t WindowOf(uint32_t user, absl::Time t) const;

  const int32_t max_pending_;
  const std::vector<UserConfig> users_;
  // A std::mutex rather than absl::Mutex: Debian's prebuilt Abseil is not
  // built with ThreadSanitizer annotations, so TSan cannot see absl::Mutex's
  // ordering and reports false races; pthread mutexes it intercepts.
  mutable std::mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::Time latest_now_ ABSL_GUARDED_BY(mu_) = absl::UnixEpoch();
  absl::flat_hash_map<RequestId, Live> live_ ABSL_GUARDED_BY(mu_);
  std::vector<PerUser> per_user_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<RequestId> queued_ ABSL_GUARDED_BY(mu_);
  std::vector<Submission> submissions_ ABSL_GUARDED_BY(mu_);
  std::vector<RequestId> cancels_ ABSL_GUARDED_BY(mu_);
  std::vector<RequestResult> results_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_INBOX_H_

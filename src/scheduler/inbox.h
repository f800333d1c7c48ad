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
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"

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
  explicit Inbox(int32_t max_pending) : max_pending_(max_pending) {}

  // Assigns an id and queues the submission. ResourceExhausted when
  // max_pending requests are live.
  absl::StatusOr<RequestId> Submit(RequestSpec spec,
                                   std::vector<uint64_t> prompt_hashes);
  // NotFound unless `id` is live and not already being cancelled.
  absl::Status Cancel(RequestId id);

  // Moves pending submissions and cancellations into the (cleared) outputs.
  void Drain(std::vector<Submission>* submissions,
             std::vector<RequestId>* cancels);

  // The request is terminal: forget it and, unless `keep` is false, queue the
  // result for DrainResults.
  void Finish(RequestResult result, bool keep);
  size_t DrainResults(std::vector<RequestResult>* out);

  bool IsQueued(RequestId id) const;
  int32_t num_live() const;
  int32_t num_queued() const;

 private:
  const int32_t max_pending_;
  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Live ids -> whether a cancellation has been requested.
  absl::flat_hash_map<RequestId, bool> live_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<RequestId, bool> queued_ ABSL_GUARDED_BY(mu_);
  std::vector<Submission> submissions_ ABSL_GUARDED_BY(mu_);
  std::vector<RequestId> cancels_ ABSL_GUARDED_BY(mu_);
  std::vector<RequestResult> results_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_INBOX_H_

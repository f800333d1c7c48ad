// File: src/scheduler/pending_shares.h
//
// Who may hold how much of the pending queue. Unfinished requests are bounded
// twice, by count (max_pending_requests) and by bytes (max_pending_bytes).
// Part of each bound is reserved for the users, split by weight; the rest is
// shared, first come. A user may grow only while everyone else's unused
// reservation still fits beside it, so a member who floods the house leaves
// every other member its reserved room however fast it submits.
//
// Not thread-safe: the inbox calls it under its mutex. O(1) per call.

#ifndef HEARTH_SCHEDULER_PENDING_SHARES_H_
#define HEARTH_SCHEDULER_PENDING_SHARES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hearth/request/request_spec.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth::internal {

// The bytes a request holds against max_pending_bytes while unfinished.
inline int64_t PendingBytes(const RequestSpec& spec) {
  return static_cast<int64_t>(spec.prompt_token_ids.size() * sizeof(TokenId) +
                              spec.label.size() + spec.cache_scope.name.size() +
                              spec.cache_scope.shared_prefix_scope.size() +
                              spec.encoder_spans.size() * sizeof(EncoderSpan));
}

class PendingShares {
 public:
  explicit PendingShares(const SchedulerOptions& options);

  // OK, or ResourceExhausted saying which bound `count` more requests of
  // `user` would cross: the count, or the bytes.
  absl::Status CanAddRequest(uint32_t user, int64_t count = 1) const;
  absl::Status CanAddBytes(uint32_t user, int64_t bytes) const;
  void Add(uint32_t user, int64_t bytes);
  void Remove(uint32_t user, int64_t bytes);

  // Internal when the totals, per-user holdings and commitments disagree.
  absl::Status Audit() const;

  // Unfinished requests of one user.
  int64_t requests_of(uint32_t user) const { return requests_.held[user]; }

 private:
  // One bounded resource. `committed` is the sum over users of
  // max(reserved, held): what is either used or promised.
  struct Bound {
    int64_t limit = 0;
    int64_t total = 0;
    int64_t committed = 0;
    std::vector<int64_t> reserved;
    std::vector<int64_t> held;

    bool Fits(uint32_t user, int64_t amount) const;
    absl::Status Audit(const char* what) const;
    void Change(uint32_t user, int64_t amount);
  };
  static Bound MakeBound(int64_t limit, const SchedulerOptions& options);
  absl::Status Refusal(uint32_t user, const Bound& bound, int64_t amount,
                       const char* option, const char* unit) const;

  std::vector<std::string> names_;
  Bound requests_;
  Bound bytes_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_PENDING_SHARES_H_

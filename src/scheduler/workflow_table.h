// File: src/scheduler/workflow_table.h
//
// Which agent workflow each request belongs to. A request without a parent
// starts a workflow; a call naming a parent joins the parent's. Live
// requests carry their workflow in their record; this table remembers ended
// requests for `retention`, because the next call of an agent loop is
// usually submitted after the call that triggered it has ended.
//
// Memory is fixed: at most `capacity` ended requests are remembered, the
// oldest forgotten first when a flood of ends outgrows it, and both tables
// are sized at construction, so no Plan ever pays for growing them. Ends are
// recorded with non-decreasing times (the scheduler's `now`), so expiry pops
// the front of a FIFO ring: O(expired) per Expire, no scan. Engine thread
// only.

#ifndef HEARTH_SCHEDULER_WORKFLOW_TABLE_H_
#define HEARTH_SCHEDULER_WORKFLOW_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hearth/common/ids.h"
#include "internal/probing_hash_map.h"

namespace hearth::internal {

// What a call inherits from its workflow.
struct WorkflowInfo {
  // The workflow's first call, and when it arrived.
  RequestId root;
  uint64_t arrival_seq = 0;
  absl::Time arrival_time = absl::InfinitePast();
  // Calls before this one on its parent chain.
  int32_t depth = 0;
  UserId user;
};

// Why a call of `user` cannot join the workflow of `parent`, owned by another
// user: "request <parent> is not one of user "<user>"'s requests; ...". The
// owner is not named: a host may pass the reason on to the member who sent
// the call, and who owns which request is not that member's to learn. Submit
// says it for live parents, intake for remembered ones.
std::string ForeignParentReason(RequestId parent, const std::string& user);

class WorkflowTable {
 public:
  // REQUIRES: capacity >= 1.
  WorkflowTable(absl::Duration retention, size_t capacity);

  // `id` ended at `now`: remember its workflow so that calls naming it as
  // their parent join it (forgetting the oldest remembered end when full).
  // `now` must not decrease between calls.
  void Remember(RequestId id, const WorkflowInfo& info, absl::Time now);
  // The workflow of an ended request still remembered, or null.
  const WorkflowInfo* FindEnded(RequestId id) const;
  // Forgets requests that ended more than `retention` before `now`.
  void Expire(absl::Time now);

 private:
  struct Ended {
    absl::Time forget_at;
    RequestId id;
  };

  const absl::Duration retention_;
  ProbingHashMap<RequestId, WorkflowInfo> ended_;
  void ForgetOldest();

  // Ended requests in end order, as a ring over `ring_`.
  std::vector<Ended> ring_;
  size_t head_ = 0;
  size_t count_ = 0;
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_WORKFLOW_TABLE_H_

// File: src/policy/tree/tree_policy.h
//
// The Policy that drives a tree of policy nodes (node.h): every policy but
// the standalone FIFO is one (policy_tree.h).

#ifndef HEARTH_SRC_POLICY_TREE_TREE_POLICY_H_
#define HEARTH_SRC_POLICY_TREE_TREE_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hearth/policy/policy.h"
#include "policy/tree/node.h"

namespace hearth::policy_internal {

// What the tree decides beside its order (PolicyTreeConfig's fields of the
// same names).
struct TreePolicyRules {
  absl::Duration workflow_head_start = absl::ZeroDuration();
  absl::Duration backfill_wait = absl::ZeroDuration();
  // Zero unless the class level is the SLO level.
  double background_kv_reserve = 0;
  // The aging interval, after which a request is no longer held to either
  // reserve (background_kv_reserve, priority_reserve).
  absl::Duration reserve_waived_after = absl::InfiniteDuration();
  // True with the SLO class level: prefills share the step by deadline.
  bool prefills_by_deadline = false;
  // Zero unless the class level is the SLO level and a class targets TTFT.
  int32_t background_prefill_tokens = 0;
  // The SLO level over a host tier (SchedulerOptions::preemption_mode kSwap):
  // a waiting interactive request may evict background work even with
  // background_kv_reserve, since the victim's KV is paused on the host, not
  // thrown away.
  bool pauses_background = false;
  // Trunk reservation of the priority class level
  // (PriorityQuotaOptions::kv_reserve); share 0 unless it is that level and
  // class priorities differ.
  struct PriorityReserve {
    double share = 0;
    // WorkClassConfig::priority by WorkClassId::value() (beyond: 0).
    std::vector<int64_t> class_priority;
    int64_t top = 0;
    int64_t bottom = 0;
  };
  PriorityReserve priority_reserve;
};

// A policy named `name` over `root`.
std::unique_ptr<Policy> NewTreePolicy(std::string name, std::unique_ptr<Node> root,
                                      const TreePolicyRules& rules);

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_TREE_TREE_POLICY_H_

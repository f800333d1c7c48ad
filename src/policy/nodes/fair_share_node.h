// File: src/policy/nodes/fair_share_node.h
//
// Virtual Token Counter (Sheng et al., OSDI'24) as a policy-tree node that
// shares service between groups: users (the user level, vtc.h) or work
// classes (the weighted-shares class level, policy_tree.h), with the lift
// rule. Each group has its own child subtree.

#ifndef HEARTH_SRC_POLICY_NODES_FAIR_SHARE_NODE_H_
#define HEARTH_SRC_POLICY_NODES_FAIR_SHARE_NODE_H_

#include <memory>
#include <vector>

#include "policy/tree/node.h"

namespace hearth::policy_internal {

// Which RequestView field a fair-share node groups by.
enum class ShareKey { kUser, kWorkClass };

struct FairShareParams {
  ShareKey key = ShareKey::kUser;
  double prompt_token_weight = 1.0;
  double decode_token_weight = 2.0;
  // By key value; missing keys weigh 1. Each > 0 and finite.
  std::vector<double> weights;
  bool preempt_for_admission = false;
  double admission_preemption_gap = 0;
};

std::unique_ptr<Node> NewFairShareNode(FairShareParams params,
                                       NodeFactory child);

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_NODES_FAIR_SHARE_NODE_H_

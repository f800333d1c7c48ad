// File: src/policy/nodes/priority_node.h
//
// Priority levels with token quotas and aging as a policy-tree node
// (priority_quota.h states the rules). A request's level is Entry::priority,
// its class's priority plus its own. Each level has its own child subtree.

#ifndef HEARTH_SRC_POLICY_NODES_PRIORITY_NODE_H_
#define HEARTH_SRC_POLICY_NODES_PRIORITY_NODE_H_

#include <memory>

#include "hearth/policy/priority_quota.h"
#include "policy/tree/node.h"

namespace hearth::policy_internal {

// REQUIRES: ValidatePriorityQuotaOptions(options).ok().
std::unique_ptr<Node> NewPriorityNode(const PriorityQuotaOptions& options,
                                      NodeFactory child);

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_NODES_PRIORITY_NODE_H_

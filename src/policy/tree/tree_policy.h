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

// A policy named `name` over `root`. `head_start` and `backfill_wait`: see
// PolicyTreeConfig::workflow_head_start and ::backfill_wait.
std::unique_ptr<Policy> NewTreePolicy(std::string name, std::unique_ptr<Node> root,
                                      absl::Duration head_start, absl::Duration backfill_wait);

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_TREE_TREE_POLICY_H_

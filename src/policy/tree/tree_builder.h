// File: src/policy/tree/tree_builder.h
//
// Assembles the policy a PolicyTreeConfig describes: the only code that
// knows every node type. Weights and class priorities the configuration
// leaves out come from the scheduler's options.

#ifndef HEARTH_SRC_POLICY_TREE_TREE_BUILDER_H_
#define HEARTH_SRC_POLICY_TREE_TREE_BUILDER_H_

#include <memory>

#include "hearth/policy/policy.h"
#include "hearth/policy/policy_tree.h"

namespace hearth::policy_internal {

// REQUIRES: ValidatePolicyTreeConfig(config).ok().
std::unique_ptr<Policy> BuildTreePolicy(const PolicyTreeConfig& config,
                                        const SchedulerOptions& options);

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_TREE_TREE_BUILDER_H_

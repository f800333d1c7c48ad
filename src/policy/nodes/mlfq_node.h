// File: src/policy/nodes/mlfq_node.h
//
// Skip-join preemptive MLFQ (FastServe) as a policy-tree leaf (mlfq.h states
// the rules). A leaf keeps each entry's level and attained service in a slot
// indexed by Entry::index; all MLFQ leaves of one tree share one array of
// slots (an entry belongs to exactly one leaf), so the array grows with the
// tree's entry pool and steady-state steps do not allocate.

#ifndef HEARTH_SRC_POLICY_NODES_MLFQ_NODE_H_
#define HEARTH_SRC_POLICY_NODES_MLFQ_NODE_H_

#include "hearth/policy/mlfq.h"
#include "policy/tree/node.h"

namespace hearth::policy_internal {

// A factory of MLFQ leaves for one tree, sharing one array of slots.
// REQUIRES: ValidateMlfqOptions(options).ok().
NodeFactory MlfqLeafFactory(const MlfqOptions& options);

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_NODES_MLFQ_NODE_H_

// File: src/policy/nodes/arrival_order_node.h
//
// The arrival-order leaf of policy trees: requests by Entry::rank_time, then
// arrival, so the next call of a running agent workflow can rank ahead of
// work that arrived shortly before it (Agentix: program-level first come,
// first served, bounded by the head start). Victims are the latest in that
// order, and only for a running beneficiary ranked earlier.

#ifndef HEARTH_SRC_POLICY_NODES_ARRIVAL_ORDER_NODE_H_
#define HEARTH_SRC_POLICY_NODES_ARRIVAL_ORDER_NODE_H_

#include <memory>

#include "policy/tree/node.h"

namespace hearth::policy_internal {

std::unique_ptr<Node> NewArrivalOrderNode();

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_NODES_ARRIVAL_ORDER_NODE_H_

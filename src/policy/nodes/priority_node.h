// File: src/policy/nodes/priority_node.h
//
// Priority levels with token quotas and aging as a policy-tree node
// (priority_quota.h states the rules). A request's level is its class's
// priority plus its own (Entry::priority), summed in 64 bits so that two
// large int32 values cannot overflow. Each level has its own child subtree.

#ifndef HEARTH_SRC_POLICY_NODES_PRIORITY_NODE_H_
#define HEARTH_SRC_POLICY_NODES_PRIORITY_NODE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/time/time.h"

#include "hearth/policy/priority_quota.h"
#include "policy/nodes/member_ledger.h"
#include "policy/tree/node.h"

namespace hearth::policy_internal {

// REQUIRES: ValidatePriorityQuotaOptions(options).ok().
// `class_priorities`: WorkClassConfig::priority by WorkClassId::value()
// (classes beyond the end have 0).
std::unique_ptr<Node> NewPriorityNode(const PriorityQuotaOptions& options,
                                      std::vector<int64_t> class_priorities,
                                      NodeFactory child);

// How the SLO level shares a shortage between members (PolicyTreeConfig::
// member_guard): their ledger, and the counter lead (VTC units) past which an
// urgent on-time head yields to another member's late head.
struct MemberGuard {
  MemberLedgerParams ledger;
  double gap = 0;
};

// The SLO-aware class level (priority_node_impl.h's file comment): one level per
// work class, ranked by deadline, rank time + the request's own TTFT target
// (RequestView::ttft_slo) or else `class_ttft` of its class
// (WorkClassConfig::ttft_slo by WorkClassId::value(); InfiniteDuration or
// beyond the end: background; `class_e2e`, WorkClassConfig::e2e_slo by the
// same index, gives a background class its completion target). Quotas apply
// by priority as above. With
// `guard`, late work is shared between members and waiting work may preempt
// an over-served member's less urgent work (the file comment's member guard).
// REQUIRES: ValidatePriorityQuotaOptions(options).ok(); each target > 0.
std::unique_ptr<Node> NewSloClassNode(const PriorityQuotaOptions& options,
                                      std::vector<int64_t> class_priorities,
                                      std::vector<absl::Duration> class_ttft,
                                      std::vector<absl::Duration> class_e2e,
                                      std::optional<MemberGuard> guard, NodeFactory child);

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_NODES_PRIORITY_NODE_H_

// File: hearth/policy/policy_registry.h
//
// Builds a policy factory from a name and one configuration struct, so hosts,
// the simulator and benchmarks can select the policy from configuration.
//
// Known names:
//   "fifo"       first come, first served (fifo.h)
//   "vtc"        Virtual Token Counter between users (vtc.h)
//   "priority"   priority levels with token quotas and aging (priority_quota.h)
//   "mlfq"       skip-join preemptive multi-level feedback queue (mlfq.h)
//   "household"  the policy tree SLO deadline -> VTC -> FIFO or MLFQ
//                (policy_tree.h)
//
// Example:
//   hearth::PolicyConfig config;   // user weights come from options.users
//   absl::StatusOr<hearth::PolicyFactory> factory =
//       hearth::MakePolicyFactory("vtc", config);
//   if (!factory.ok()) return factory.status();
//   options.policy_factory = *std::move(factory);

#ifndef HEARTH_POLICY_POLICY_REGISTRY_H_
#define HEARTH_POLICY_POLICY_REGISTRY_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/policy/mlfq.h"
#include "hearth/policy/policy.h"
#include "hearth/policy/policy_tree.h"
#include "hearth/policy/priority_quota.h"
#include "hearth/policy/vtc.h"

namespace hearth {

struct PolicyConfig {
  // Used by "vtc" and by the user level of "household".
  VtcOptions vtc;
  // Used by "priority" and by the class level of "household" (its aging
  // interval and quotas).
  PriorityQuotaOptions priority;
  // Used by "mlfq" and by "household" when its request level is MLFQ.
  MlfqOptions mlfq;
  // The request level of "household".
  RequestLevel household_request_level = RequestLevel::kFifo;
  // The backfilling of "vtc" (vtc.h; PolicyTreeConfig::backfill_wait).
  absl::Duration vtc_backfill_wait = kDefaultVtcBackfillWait;
  // The backfilling of "household" (PolicyTreeConfig::backfill_wait).
  absl::Duration household_backfill_wait = kHouseholdBackfillWait;
  // The cache share "household" keeps for interactive arrivals
  // (PolicyTreeConfig::background_kv_reserve).
  double household_background_kv_reserve = kHouseholdBackgroundKvReserve;
  // Background prefill tokens per step in "household"
  // (PolicyTreeConfig::background_prefill_tokens).
  int32_t household_background_prefill_tokens = kHouseholdBackgroundPrefillTokens;
  // Whether "household" shares a shortage between members by weight
  // (PolicyTreeConfig::member_guard).
  bool household_member_guard = true;
  // Used by "vtc", "priority" and "household" (their FIFO request level);
  // see PolicyTreeConfig::workflow_head_start.
  absl::Duration workflow_head_start = kDefaultWorkflowHeadStart;
};

// MakePolicyFactory()
//
// Validates the part of `config` the named policy uses and returns its
// factory. InvalidArgument for an unknown name (listing the known ones) or an
// invalid configuration (naming the field).
absl::StatusOr<PolicyFactory> MakePolicyFactory(std::string_view name,
                                                const PolicyConfig& config);

// The names MakePolicyFactory() accepts, in the order listed above.
std::vector<std::string_view> KnownPolicyNames();

}  // namespace hearth

#endif  // HEARTH_POLICY_POLICY_REGISTRY_H_

// File: src/policy/policy_registry.cc
//
// Every policy factory: the named ones of MakePolicyFactory and the
// per-policy ones of vtc.h, priority_quota.h, mlfq.h and policy_tree.h. All
// but FIFO are trees (policy_tree.h) assembled by the tree builder.

#include "hearth/policy/policy_registry.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hearth/policy/fifo.h"
#include "policy/tree/tree_builder.h"

namespace hearth {

namespace {

// A tree with the given levels; the rest of its configuration at defaults.
PolicyTreeConfig Tree(std::string name, ClassLevel class_level, UserLevel user_level,
                      RequestLevel request_level) {
  PolicyTreeConfig config;
  config.name = std::move(name);
  config.class_level = class_level;
  config.user_level = user_level;
  config.request_level = request_level;
  return config;
}

}  // namespace

PolicyTreeConfig HouseholdTreeConfig() {
  PolicyTreeConfig config =
      Tree("household", ClassLevel::kSlo, UserLevel::kVtc, RequestLevel::kFifo);
  config.backfill_wait = kHouseholdBackfillWait;
  config.background_kv_reserve = kHouseholdBackgroundKvReserve;
  config.background_prefill_tokens = kHouseholdBackgroundPrefillTokens;
  return config;
}

absl::StatusOr<PolicyFactory> PolicyTreeFactory(const PolicyTreeConfig& config) {
  absl::Status status = ValidatePolicyTreeConfig(config);
  if (!status.ok()) return status;
  return PolicyFactory([config](const SchedulerOptions& options) {
    return policy_internal::BuildTreePolicy(config, options);
  });
}

absl::StatusOr<PolicyFactory> VtcPolicyFactory(const VtcOptions& options,
                                               absl::Duration workflow_head_start,
                                               absl::Duration backfill_wait) {
  PolicyTreeConfig tree =
      Tree("vtc", ClassLevel::kNone, UserLevel::kVtc, RequestLevel::kFifo);
  tree.vtc = options;
  tree.workflow_head_start = workflow_head_start;
  tree.backfill_wait = backfill_wait;
  return PolicyTreeFactory(tree);
}

absl::StatusOr<PolicyFactory> PriorityQuotaPolicyFactory(
    const PriorityQuotaOptions& options, absl::Duration workflow_head_start) {
  PolicyTreeConfig tree =
      Tree("priority", ClassLevel::kPriority, UserLevel::kNone, RequestLevel::kFifo);
  tree.priority = options;
  tree.workflow_head_start = workflow_head_start;
  return PolicyTreeFactory(tree);
}

absl::StatusOr<PolicyFactory> MlfqPolicyFactory(const MlfqOptions& options) {
  PolicyTreeConfig tree =
      Tree("mlfq", ClassLevel::kNone, UserLevel::kNone, RequestLevel::kMlfq);
  tree.mlfq = options;
  return PolicyTreeFactory(tree);
}

std::vector<std::string_view> KnownPolicyNames() {
  return {"fifo", "vtc", "priority", "mlfq", "household"};
}

absl::StatusOr<PolicyFactory> MakePolicyFactory(std::string_view name,
                                                const PolicyConfig& config) {
  if (name == "fifo") {
    return PolicyFactory([](const SchedulerOptions&) { return NewFifoPolicy(); });
  }
  if (name == "vtc") {
    return VtcPolicyFactory(config.vtc, config.workflow_head_start, config.vtc_backfill_wait);
  }
  if (name == "priority") {
    return PriorityQuotaPolicyFactory(config.priority, config.workflow_head_start);
  }
  if (name == "mlfq") return MlfqPolicyFactory(config.mlfq);
  if (name == "household") {
    PolicyTreeConfig tree = HouseholdTreeConfig();
    tree.priority = config.priority;
    tree.vtc = config.vtc;
    tree.mlfq = config.mlfq;
    tree.request_level = config.household_request_level;
    tree.backfill_wait = config.household_backfill_wait;
    tree.background_kv_reserve = config.household_background_kv_reserve;
    tree.background_prefill_tokens = config.household_background_prefill_tokens;
    tree.member_guard = config.household_member_guard;
    tree.workflow_head_start = config.workflow_head_start;
    return PolicyTreeFactory(tree);
  }
  // This Abseil's string_view is its own type, not std::string_view.
  std::vector<std::string> known;
  for (std::string_view known_name : KnownPolicyNames()) known.emplace_back(known_name);
  return absl::InvalidArgumentError(absl::StrCat("unknown policy \"", std::string(name),
                                                 "\"; known policies: ",
                                                 absl::StrJoin(known, ", ")));
}

}  // namespace hearth

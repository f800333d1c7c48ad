// File: src/policy/policy_registry.cc

#include "hearth/policy/policy_registry.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hearth/policy/fifo.h"

namespace hearth {

std::vector<std::string_view> KnownPolicyNames() {
  return {"fifo", "vtc", "priority", "mlfq", "household"};
}

absl::StatusOr<PolicyFactory> MakePolicyFactory(std::string_view name,
                                                const PolicyConfig& config) {
  if (name == "fifo") {
    return PolicyFactory([](const SchedulerOptions&) { return NewFifoPolicy(); });
  }
  if (name == "vtc") return VtcPolicyFactory(config.vtc, config.workflow_head_start);
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
    tree.workflow_head_start = config.workflow_head_start;
    return PolicyTreeFactory(tree);
  }
  // This Abseil's string_view is its own type, not std::string_view.
  std::string known;
  for (std::string_view known_name : KnownPolicyNames()) {
    if (!known.empty()) known += ", ";
    known += known_name;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown policy \"", std::string(name), "\"; known policies: ", known));
}

}  // namespace hearth

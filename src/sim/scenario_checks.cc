#include "sim/scenario_checks.h"
#include "sim/scenario_options.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/sim/oracle_policy.h"
#include "scheduler/options_validation.h"

namespace hearth::internal {
namespace {

// A library field and the scenario key that sets it.
struct KeyFor {
  const char* field;
  const char* key;
};

// Policy configuration fields (as MakePolicyFactory's messages name them).
constexpr KeyFor kPolicyKeys[] = {
    {"VtcOptions::prompt_token_weight", "vtc_prompt_weight"},
    {"VtcOptions::decode_token_weight", "vtc_decode_weight"},
    {"PriorityQuotaOptions::aging_interval", "aging_s"},
    {"PriorityQuotaOptions::quota_window", "quota_window_s"},
    {"PriorityQuotaOptions::quotas", "quotas"},
    {"PriorityQuotaOptions::kv_reserve", "priority_kv_reserve"},
    {"MlfqOptions::num_levels", "mlfq_levels"},
    {"MlfqOptions::base_quantum", "mlfq_base_quantum"},
    {"MlfqOptions::starvation_bound", "mlfq_starvation_s"},
    {"MlfqOptions::prefill_token_cost", "mlfq_prefill_token_cost"},
    {"MlfqOptions::decode_token_cost", "mlfq_decode_token_cost"},
    {"MlfqOptions::max_preemptions_per_step", "mlfq_max_preemptions_per_step"},
    {"VtcOptions::admission_preemption_gap", "vtc_admission_preemption_gap"},
    {"PolicyTreeConfig::workflow_head_start", "workflow_head_start_s"},
};

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The node at a dotted key ("scheduler.kv.num_device_blocks",
// "classes[1].ttft_slo_s"), or its nearest present ancestor, or the root.
const toml::node& NodeAt(const toml::table& root, const std::string& dotted) {
  const toml::node* at = &root;
  for (size_t from = 0; from < dotted.size();) {
    const size_t dot = std::min(dotted.find('.', from), dotted.size());
    std::string segment = dotted.substr(from, dot - from);
    const size_t bracket = segment.find('[');
    const toml::table* t = at->as_table();
    const toml::node* next = t != nullptr ? t->get(segment.substr(0, bracket)) : nullptr;
    if (next != nullptr && bracket != std::string::npos) {
      const toml::array* entries = next->as_array();
      const size_t index = std::strtoul(segment.c_str() + bracket + 1, nullptr, 10);
      next = entries != nullptr && index < entries->size() ? entries->get(index) : nullptr;
    }
    if (next == nullptr) break;
    at = next;
    from = dot + 1;
  }
  return *at;
}

}  // namespace

absl::Status CheckSchedulerOptions(const ScenarioReader& r, const toml::table& root,
                                   const Scenario& s) {
  const absl::Status st = ValidateOptions(s.scheduler);
  if (st.ok()) return st;
  const std::string kPrefix = "SchedulerOptions.";
  const std::string message(st.message());
  std::string field = StartsWith(message, kPrefix) ? message.substr(kPrefix.size()) : "";
  field = field.substr(0, field.find(' '));
  // The message names the field by its path; the scenario's key is the
  // schema's spelling of it (scenario_options.h).
  std::string key = ScenarioKeyOfField(field);
  if (key.empty()) key = "scheduler";
  return r.Error(NodeAt(root, key), key, message);
}

absl::Status CheckPolicies(const ScenarioReader& r, const toml::table& root,
                           const Scenario& s) {
  for (const std::string& name : s.policies) {
    if (IsOraclePolicy(name)) continue;  // Knobless; not in the registry.
    const absl::StatusOr<PolicyFactory> factory = MakePolicyFactory(name, s.policy_config);
    if (factory.ok()) continue;
    const std::string message(factory.status().message());
    std::string key = "policy";
    for (const KeyFor& k : kPolicyKeys) {
      if (StartsWith(message, k.field)) {
        key = absl::StrCat("policy.", k.key);
        break;
      }
    }
    return r.Error(NodeAt(root, key), key,
                   absl::StrCat("policy ", name, ": ", message));
  }
  return absl::OkStatus();
}

}  // namespace hearth::internal

#include "sim/scenario_checks.h"

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

// SchedulerOptions fields (as its messages name them, after
// "SchedulerOptions.") set by a top-level table of the scenario.
constexpr KeyFor kEngineKeys[] = {
    {"kv.block_size", "engine.block_size"},
    {"kv.num_device_blocks", "engine.kv_blocks"},
    {"kv.num_host_blocks", "engine.host_blocks"},
    {"kv.watermark_blocks", "engine.watermark_blocks"},
    {"kv.growth_headroom_tokens", "engine.growth_headroom_tokens"},
    {"preemption_mode", "engine.preemption"},
    {"max_batched_tokens", "engine.max_batched_tokens"},
    {"max_running", "engine.max_running"},
    {"max_prefill_chunk_tokens", "engine.max_prefill_chunk_tokens"},
    {"models[0].context_length", "engine.max_model_len"},
    {"models", "model.name"},
    {"max_pending_requests", "intake.max_pending_requests"},
    {"max_pending_bytes", "intake.max_pending_bytes"},
    {"reserved_pending_share", "intake.reserved_pending_share"},
    {"max_intake_per_plan", "intake.max_intake_per_plan"},
    {"max_label_bytes", "intake.max_label_bytes"},
    {"max_arrival_lead", "intake.max_arrival_lead_s"},
    {"swap_block_cost_tokens", "engine.swap_block_cost_tokens"},
    {"max_admission_waste_per_block", "engine.max_admission_waste_per_block"},
    {"max_preemptions_per_request", "engine.max_preemptions_per_request"},
    {"max_admission_declines", "engine.max_admission_declines"},
    {"workflow_retention", "engine.workflow_retention_s"},
    {"step_time_model.fixed", "engine.step_time_fixed_ms"},
    {"step_time_model.per_token", "engine.step_time_per_token_ms"},
};

// Fields of one [[classes]] or [[users]] entry.
constexpr KeyFor kEntryKeys[] = {
    {"name", "name"},
    {"priority", "priority"},
    {"max_running", "max_running"},
    {"kv_block_budget", "kv_block_budget"},
    {"queue_timeout", "queue_timeout_s"},
    {"max_retries", "max_retries"},
    {"weight", "weight"},
    {"max_queued_requests", "max_queued_requests"},
    {"token_quota", "token_quota"},
    {"quota_window", "quota_window_s"},
    {"ttft_slo", "slo_ttft_ms"},
    {"tpot_slo", "slo_tpot_ms"},
    {"e2e_slo", "slo_e2e_s"},
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

// The node at a dotted key ("engine.kv_blocks"), or its nearest present
// ancestor table, or the root.
const toml::node& NodeAt(const toml::table& root, const std::string& dotted) {
  const toml::node* at = &root;
  for (size_t from = 0; from < dotted.size();) {
    const size_t dot = std::min(dotted.find('.', from), dotted.size());
    const toml::table* t = at->as_table();
    const toml::node* next = t != nullptr ? t->get(dotted.substr(from, dot - from)) : nullptr;
    if (next == nullptr) break;
    at = next;
    from = dot + 1;
  }
  return *at;
}

// "<array>[i].<field>" in `field` (e.g. "work_classes[1].kv_block_budget"),
// as the scenario's "<table>[i].<key>" and its node.
bool EntryKey(const toml::table& root, const std::string& field, const std::string& array,
              const std::string& table, std::string* key, const toml::node** node) {
  if (!StartsWith(field, array + "[")) return false;
  const size_t index = std::strtoul(field.c_str() + array.size() + 1, nullptr, 10);
  const size_t close = field.find("].");
  const std::string sub = close == std::string::npos ? "" : field.substr(close + 2);
  const toml::node* list = root.get(table);
  const toml::array* entries = list != nullptr ? list->as_array() : nullptr;
  if (entries == nullptr || index >= entries->size()) return false;
  *node = entries->get(index);
  *key = absl::StrCat(table, "[", index, "]");
  for (const KeyFor& k : kEntryKeys) {
    if (sub != k.field) continue;
    absl::StrAppend(key, ".", k.key);
    if (const toml::node* n = (*node)->as_table()->get(k.key)) *node = n;
    break;
  }
  return true;
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
  std::string key;
  const toml::node* node = nullptr;
  if (EntryKey(root, field, "work_classes", "classes", &key, &node) ||
      EntryKey(root, field, "users", "users", &key, &node)) {
    return r.Error(*node, key, message);
  }
  for (const KeyFor& k : kEngineKeys) {
    if (StartsWith(field, k.field)) return r.Error(NodeAt(root, k.key), k.key, message);
  }
  return r.Error(NodeAt(root, "engine"), "engine", message);
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

// The top-level `policies` list and the [policy] section: every knob of
// PolicyConfig (see scenario_keys.cc for the keys' documentation).

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/scenario_keys.h"
#include "internal/status_macros.h"
#include "sim/quote.h"
#include "sim/scenario_reader.h"

namespace hearth::internal {
namespace {

absl::Status ParsePolicyNames(const ScenarioReader& r, const toml::table& root, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(s.policies, r.Strings(root, "policies", ""));
  const std::vector<std::string_view> names = ScenarioPolicyNames();
  if (s.policies.empty()) s.policies.assign(names.begin(), names.end());
  for (const std::string& p : s.policies) {
    if (std::find(names.begin(), names.end(), p) == names.end()) {
      std::string known;
      for (std::string_view k : names) {
        absl::StrAppend(&known, known.empty() ? "" : ", ", std::string(k));
      }
      return r.Error(*root.get("policies"), "policies",
                     absl::StrCat("unknown policy ", Quote(p), "; known: ", known));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseQuotas(const ScenarioReader& r, const toml::table& p, PolicyConfig& pc) {
  HEARTH_ASSIGN_OR_RETURN(auto quotas, r.Tables(p, "quotas", "policy"));
  for (size_t i = 0; i < quotas.size(); ++i) {
    const std::string path = absl::StrCat("policy.quotas[", i, "]");
    HEARTH_RETURN_IF_ERROR(
        CheckKeys(*quotas[i], ScenarioKeysOf("policy.quotas"), r.file(), path));
    LevelQuota q;
    HEARTH_ASSIGN_OR_RETURN(int64_t prio, r.Int(*quotas[i], "priority", path, std::nullopt,
                                                -1000, 1000));
    q.priority = static_cast<int32_t>(prio);
    HEARTH_ASSIGN_OR_RETURN(q.tokens_per_window, r.Int(*quotas[i], "tokens_per_window", path,
                                                       0, 0, int64_t{1} << 40));
    HEARTH_ASSIGN_OR_RETURN(q.max_share, r.Number(*quotas[i], "max_share", path, 0, 0, 1));
    if (q.tokens_per_window == 0 && q.max_share == 0) {
      return r.Error(*quotas[i], path,
                     "sets no cap; give tokens_per_window (>= 1) or max_share (in (0, 1])");
    }
    pc.priority.quotas.push_back(q);
  }
  return absl::OkStatus();
}

absl::Status ParseMlfq(const ScenarioReader& r, const toml::table& p, MlfqOptions& m) {
  HEARTH_ASSIGN_OR_RETURN(int64_t levels, r.Int(p, "mlfq_levels", "policy", m.num_levels, 1, 32));
  m.num_levels = static_cast<int32_t>(levels);
  HEARTH_ASSIGN_OR_RETURN(m.base_quantum,
                          r.Number(p, "mlfq_base_quantum", "policy", m.base_quantum, 1e-3, 1e9));
  HEARTH_ASSIGN_OR_RETURN(m.prefill_token_cost, r.Number(p, "mlfq_prefill_token_cost", "policy",
                                                         m.prefill_token_cost, 0, 1e9));
  HEARTH_ASSIGN_OR_RETURN(m.decode_token_cost, r.Number(p, "mlfq_decode_token_cost", "policy",
                                                        m.decode_token_cost, 0, 1e9));
  HEARTH_ASSIGN_OR_RETURN(int64_t per_step, r.Int(p, "mlfq_max_preemptions_per_step", "policy",
                                                  m.max_preemptions_per_step, 0, 1 << 20));
  m.max_preemptions_per_step = static_cast<int32_t>(per_step);
  HEARTH_ASSIGN_OR_RETURN(m.time_slice_with_recompute,
                          r.Bool(p, "mlfq_time_slice_with_recompute", "policy",
                                 m.time_slice_with_recompute));
  HEARTH_ASSIGN_OR_RETURN(m.starvation_bound,
                          r.Duration(p, "mlfq_starvation_s", "policy", m.starvation_bound,
                                     {.off_allowed = true, .positive = true}));
  HEARTH_ASSIGN_OR_RETURN(m.starving_share, r.Number(p, "mlfq_starving_share", "policy",
                                                     m.starving_share, 1e-6, 1.0));
  HEARTH_ASSIGN_OR_RETURN(m.use_predicted_output,
                          r.Bool(p, "mlfq_use_predicted_output", "policy",
                                 m.use_predicted_output));
  return absl::OkStatus();
}

}  // namespace

absl::Status ParsePolicy(const ScenarioReader& r, const toml::table& root, Scenario& s) {
  HEARTH_RETURN_IF_ERROR(ParsePolicyNames(r, root, s));
  HEARTH_ASSIGN_OR_RETURN(const toml::table* p, r.Table(root, "policy", ""));
  HEARTH_RETURN_IF_ERROR(CheckKeys(*p, ScenarioKeysOf("policy"), r.file(), "policy"));
  PolicyConfig& pc = s.policy_config;
  HEARTH_ASSIGN_OR_RETURN(pc.vtc.prompt_token_weight,
                          r.Number(*p, "vtc_prompt_weight", "policy", 1.0, 0, 1e6));
  HEARTH_ASSIGN_OR_RETURN(pc.vtc.decode_token_weight,
                          r.Number(*p, "vtc_decode_weight", "policy", 2.0, 0, 1e6));
  HEARTH_ASSIGN_OR_RETURN(pc.vtc.preempt_for_admission,
                          r.Bool(*p, "vtc_preempt", "policy", false));
  HEARTH_ASSIGN_OR_RETURN(pc.vtc.admission_preemption_gap,
                          r.Number(*p, "vtc_admission_preemption_gap", "policy",
                                   pc.vtc.admission_preemption_gap, 0, 1e15));
  HEARTH_ASSIGN_OR_RETURN(pc.priority.aging_interval,
                          r.Duration(*p, "aging_s", "policy", absl::Seconds(30),
                                     {.off_allowed = true, .positive = true}));
  HEARTH_ASSIGN_OR_RETURN(pc.priority.quota_window,
                          r.Duration(*p, "quota_window_s", "policy", absl::Seconds(10),
                                     {.positive = true}));
  HEARTH_RETURN_IF_ERROR(ParseQuotas(r, *p, pc));
  HEARTH_ASSIGN_OR_RETURN(pc.priority.kv_reserve,
                          r.Number(*p, "priority_kv_reserve", "policy", pc.priority.kv_reserve,
                                   0, 0.999));
  HEARTH_RETURN_IF_ERROR(ParseMlfq(r, *p, pc.mlfq));
  HEARTH_ASSIGN_OR_RETURN(pc.workflow_head_start,
                          r.Duration(*p, "workflow_head_start_s", "policy",
                                     kDefaultWorkflowHeadStart, {.off_allowed = true}));
  HEARTH_ASSIGN_OR_RETURN(pc.household_background_kv_reserve,
                          r.Number(*p, "household_background_kv_reserve", "policy",
                                   pc.household_background_kv_reserve, 0, 0.999));
  HEARTH_ASSIGN_OR_RETURN(int64_t background_prefill,
                          r.Int(*p, "household_background_prefill_tokens", "policy",
                                pc.household_background_prefill_tokens, 0, 1 << 20));
  pc.household_background_prefill_tokens = static_cast<int32_t>(background_prefill);
  HEARTH_ASSIGN_OR_RETURN(pc.household_member_guard,
                          r.Bool(*p, "household_member_guard", "policy", pc.household_member_guard));
  HEARTH_ASSIGN_OR_RETURN(pc.vtc_backfill_wait,
                          r.Duration(*p, "vtc_backfill_s", "policy", pc.vtc_backfill_wait, {}));
  HEARTH_ASSIGN_OR_RETURN(pc.household_backfill_wait,
                          r.Duration(*p, "household_backfill_s", "policy",
                                     pc.household_backfill_wait, {}));
  HEARTH_ASSIGN_OR_RETURN(std::string level,
                          r.String(*p, "household_request_level", "policy", "fifo"));
  if (level == "mlfq") {
    pc.household_request_level = RequestLevel::kMlfq;
  } else if (level != "fifo") {
    return r.Error(*p->get("household_request_level"), "policy.household_request_level",
                   "must be \"fifo\" or \"mlfq\"");
  }
  return absl::OkStatus();
}

}  // namespace hearth::internal

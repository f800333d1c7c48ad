#include "capi/policy_json.h"

#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "capi/c_status.h"
#include "internal/status_macros.h"

namespace hearth::capi {
namespace {

using json = nlohmann::json;

absl::Status ReadVtc(const JsonFields& top, VtcOptions& v) {
  const json* object = top.Find("vtc");
  if (object == nullptr) return absl::OkStatus();
  JsonFields f(*object, "vtc");
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"prompt_token_weight", "decode_token_weight",
                                      "preempt_for_admission", "admission_preemption_gap"}));
  HEARTH_RETURN_IF_ERROR(f.Read("prompt_token_weight", &v.prompt_token_weight));
  HEARTH_RETURN_IF_ERROR(f.Read("decode_token_weight", &v.decode_token_weight));
  HEARTH_RETURN_IF_ERROR(f.Read("preempt_for_admission", &v.preempt_for_admission));
  return f.Read("admission_preemption_gap", &v.admission_preemption_gap);
}

absl::Status ReadQuotas(const JsonFields& f, std::vector<LevelQuota>& quotas) {
  const json* list = f.Find("quotas");
  if (list == nullptr) return absl::OkStatus();
  if (!list->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(
        f.PathOf("quotas"), " must be a list of {priority, tokens_per_window, max_share}"));
  }
  quotas.clear();
  for (size_t i = 0; i < list->size(); ++i) {
    JsonFields q((*list)[i], absl::StrCat(f.PathOf("quotas"), "[", i, "]"));
    HEARTH_RETURN_IF_ERROR(q.CheckKeys({"priority", "tokens_per_window", "max_share"}));
    LevelQuota& quota = quotas.emplace_back();
    HEARTH_RETURN_IF_ERROR(q.Read("priority", &quota.priority));
    HEARTH_RETURN_IF_ERROR(q.Read("tokens_per_window", &quota.tokens_per_window));
    HEARTH_RETURN_IF_ERROR(q.Read("max_share", &quota.max_share));
  }
  return absl::OkStatus();
}

absl::Status ReadPriority(const JsonFields& top, PriorityQuotaOptions& p) {
  const json* object = top.Find("priority");
  if (object == nullptr) return absl::OkStatus();
  JsonFields f(*object, "priority");
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"aging_interval_s", "quota_window_s", "quotas"}));
  HEARTH_RETURN_IF_ERROR(f.ReadSeconds("aging_interval_s", &p.aging_interval));
  HEARTH_RETURN_IF_ERROR(f.ReadSeconds("quota_window_s", &p.quota_window));
  return ReadQuotas(f, p.quotas);
}

absl::Status ReadMlfq(const JsonFields& top, MlfqOptions& m) {
  const json* object = top.Find("mlfq");
  if (object == nullptr) return absl::OkStatus();
  JsonFields f(*object, "mlfq");
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"num_levels", "base_quantum", "prefill_token_cost",
                                      "decode_token_cost", "starvation_bound_s",
                                      "max_preemptions_per_step"}));
  HEARTH_RETURN_IF_ERROR(f.Read("num_levels", &m.num_levels));
  HEARTH_RETURN_IF_ERROR(f.Read("base_quantum", &m.base_quantum));
  HEARTH_RETURN_IF_ERROR(f.Read("prefill_token_cost", &m.prefill_token_cost));
  HEARTH_RETURN_IF_ERROR(f.Read("decode_token_cost", &m.decode_token_cost));
  HEARTH_RETURN_IF_ERROR(f.ReadSeconds("starvation_bound_s", &m.starvation_bound));
  return f.Read("max_preemptions_per_step", &m.max_preemptions_per_step);
}

absl::Status ReadHousehold(const JsonFields& top, PolicyConfig& c) {
  const json* object = top.Find("household");
  if (object == nullptr) return absl::OkStatus();
  JsonFields f(*object, "household");
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"request_level"}));
  std::string level;
  HEARTH_RETURN_IF_ERROR(f.Read("request_level", &level));
  if (level == "fifo") {
    c.household_request_level = RequestLevel::kFifo;
  } else if (level == "mlfq") {
    c.household_request_level = RequestLevel::kMlfq;
  } else if (!level.empty()) {
    return JsonFieldError("household.request_level", "must be \"fifo\" or \"mlfq\"");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadPolicyConfig(const JsonFields& top, PolicyConfig& config) {
  HEARTH_RETURN_IF_ERROR(ReadVtc(top, config.vtc));
  HEARTH_RETURN_IF_ERROR(ReadPriority(top, config.priority));
  HEARTH_RETURN_IF_ERROR(ReadMlfq(top, config.mlfq));
  HEARTH_RETURN_IF_ERROR(ReadHousehold(top, config));
  return top.ReadSeconds("workflow_head_start_s", &config.workflow_head_start);
}

}  // namespace hearth::capi

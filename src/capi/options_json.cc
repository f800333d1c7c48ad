#include "capi/options_json.h"

#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "capi/c_status.h"
#include "capi/json_fields.h"
#include "capi/policy_json.h"
#include "hearth/policy/policy_registry.h"
#include "internal/status_macros.h"

namespace hearth::capi {
namespace {

using nlohmann::json;

// Deepest bracket nesting of `text`, strings skipped. The parser would
// manage deeper documents; this bounds what a hostile caller can make it
// build before any key is checked.
int NestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

absl::Status ReadModel(const JsonFields& f, ModelConfig& m) {
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"name", "context_length", "vocab_size",
                                      "kv_bytes_per_token", "weights_bytes",
                                      "preload", "keep_alive_s", "base_model"}));
  HEARTH_RETURN_IF_ERROR(f.Read("base_model", &m.base_model));
  HEARTH_RETURN_IF_ERROR(f.Read("name", &m.name));
  HEARTH_RETURN_IF_ERROR(f.Read("context_length", &m.context_length));
  HEARTH_RETURN_IF_ERROR(f.Read("vocab_size", &m.vocab_size));
  HEARTH_RETURN_IF_ERROR(f.Read("kv_bytes_per_token", &m.kv_bytes_per_token));
  HEARTH_RETURN_IF_ERROR(f.Read("weights_bytes", &m.weights_bytes));
  HEARTH_RETURN_IF_ERROR(f.Read("preload", &m.preload));
  return f.ReadSeconds("keep_alive_s", &m.keep_alive);
}

absl::Status ReadUser(const JsonFields& f, UserConfig& u) {
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"name", "weight", "max_queued_requests",
                                      "token_quota", "quota_window_s"}));
  HEARTH_RETURN_IF_ERROR(f.Read("name", &u.name));
  HEARTH_RETURN_IF_ERROR(f.Read("weight", &u.weight));
  HEARTH_RETURN_IF_ERROR(f.Read("max_queued_requests", &u.max_queued_requests));
  HEARTH_RETURN_IF_ERROR(f.Read("token_quota", &u.token_quota));
  return f.ReadSeconds("quota_window_s", &u.quota_window);
}

absl::Status ReadWorkClass(const JsonFields& f, WorkClassConfig& c) {
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"name", "priority", "max_running",
                                      "kv_block_budget", "borrow",
                                      "queue_timeout_s", "max_retries",
                                      "weight", "ttft_slo_s", "tpot_slo_s"}));
  HEARTH_RETURN_IF_ERROR(f.Read("name", &c.name));
  HEARTH_RETURN_IF_ERROR(f.Read("priority", &c.priority));
  HEARTH_RETURN_IF_ERROR(f.Read("max_running", &c.max_running));
  HEARTH_RETURN_IF_ERROR(f.Read("kv_block_budget", &c.kv_block_budget));
  HEARTH_RETURN_IF_ERROR(f.Read("borrow", &c.borrow));
  HEARTH_RETURN_IF_ERROR(f.ReadSeconds("queue_timeout_s", &c.queue_timeout));
  HEARTH_RETURN_IF_ERROR(f.Read("max_retries", &c.max_retries));
  HEARTH_RETURN_IF_ERROR(f.ReadSeconds("ttft_slo_s", &c.ttft_slo));
  HEARTH_RETURN_IF_ERROR(f.ReadSeconds("tpot_slo_s", &c.tpot_slo));
  return f.Read("weight", &c.weight);
}

// A list of objects replacing `out` whole, each read by `read_one`.
template <typename Config, typename ReadOne>
absl::Status ReadList(const JsonFields& parent, std::string_view key,
                      std::vector<Config>& out, ReadOne read_one) {
  const json* list = parent.Find(key);
  if (list == nullptr) return absl::OkStatus();
  const std::string path = parent.PathOf(key);
  if (!list->is_array()) {
    return JsonFieldError(path, absl::StrCat("is ", list->type_name(),
                                             "; must be an array of objects"));
  }
  std::vector<Config> read;
  for (size_t i = 0; i < list->size(); ++i) {
    Config& config = read.emplace_back();
    HEARTH_RETURN_IF_ERROR(
        read_one(JsonFields((*list)[i], absl::StrCat(path, "[", i, "]")), config));
  }
  out = std::move(read);
  return absl::OkStatus();
}

absl::Status ReadWorkClasses(const JsonFields& top, SchedulerOptions& o) {
  const json* classes = top.Find("work_classes");
  if (classes != nullptr && classes->is_string()) {
    if (*classes != "household") {
      return JsonFieldError("work_classes",
                            "must be \"household\" or an array of objects");
    }
    o.work_classes = HouseholdWorkClasses();
    return absl::OkStatus();
  }
  return ReadList(top, "work_classes", o.work_classes, ReadWorkClass);
}

absl::Status ReadKv(const JsonFields& top, KvCacheConfig& kv) {
  const json* object = top.Find("kv");
  if (object == nullptr) return absl::OkStatus();
  JsonFields f(*object, "kv");
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"block_size", "num_device_blocks",
                                      "num_host_blocks", "watermark_blocks",
                                      "enable_prefix_caching", "prefix_hash_key"}));
  HEARTH_RETURN_IF_ERROR(f.Read("block_size", &kv.block_size));
  HEARTH_RETURN_IF_ERROR(f.Read("num_device_blocks", &kv.num_device_blocks));
  HEARTH_RETURN_IF_ERROR(f.Read("num_host_blocks", &kv.num_host_blocks));
  HEARTH_RETURN_IF_ERROR(f.Read("watermark_blocks", &kv.watermark_blocks));
  // Any 64-bit pattern is a key; JSON carries it as a signed integer.
  auto key = static_cast<int64_t>(kv.prefix_hash_key);
  HEARTH_RETURN_IF_ERROR(f.Read("prefix_hash_key", &key));
  kv.prefix_hash_key = static_cast<uint64_t>(key);
  return f.Read("enable_prefix_caching", &kv.enable_prefix_caching);
}

absl::Status ReadResidency(const JsonFields& top, ResidencyConfig& r) {
  const json* object = top.Find("residency");
  if (object == nullptr) return absl::OkStatus();
  JsonFields f(*object, "residency");
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"device_memory_bytes", "max_concurrent_loads",
                                      "max_resident_adapters", "max_adapters_per_step"}));
  HEARTH_RETURN_IF_ERROR(f.Read("device_memory_bytes", &r.device_memory_bytes));
  HEARTH_RETURN_IF_ERROR(f.Read("max_resident_adapters", &r.max_resident_adapters));
  HEARTH_RETURN_IF_ERROR(f.Read("max_adapters_per_step", &r.max_adapters_per_step));
  return f.Read("max_concurrent_loads", &r.max_concurrent_loads);
}

absl::Status ReadMetrics(const JsonFields& top, hearth_options& o) {
  const json* object = top.Find("metrics");
  if (object == nullptr) return absl::OkStatus();
  JsonFields f(*object, "metrics");
  HEARTH_RETURN_IF_ERROR(f.CheckKeys({"prefill_weight", "decode_weight", "max_gap_users"}));
  HEARTH_RETURN_IF_ERROR(f.Read("prefill_weight", &o.metrics_prefill_weight));
  HEARTH_RETURN_IF_ERROR(f.Read("decode_weight", &o.metrics_decode_weight));
  int32_t gap_users = o.metrics_max_gap_users;
  HEARTH_RETURN_IF_ERROR(f.Read("max_gap_users", &gap_users));
  o.metrics_max_gap_users = gap_users;
  return absl::OkStatus();
}

absl::Status ReadPolicy(const JsonFields& top, hearth_options& o) {
  std::string name = o.policy;
  HEARTH_RETURN_IF_ERROR(top.Read("policy", &name));
  HEARTH_RETURN_IF_ERROR(CheckPolicyName(name));
  o.policy = std::move(name);
  std::string mode;
  HEARTH_RETURN_IF_ERROR(top.Read("preemption_mode", &mode));
  if (mode == "recompute") {
    o.scheduler.preemption_mode = PreemptionMode::kRecompute;
  } else if (mode == "swap") {
    o.scheduler.preemption_mode = PreemptionMode::kSwap;
  } else if (!mode.empty()) {
    return JsonFieldError("preemption_mode", "must be \"recompute\" or \"swap\"");
  }
  return ReadPolicyConfig(top, o.policy_config);
}

absl::Status ReadLimits(const JsonFields& f, SchedulerOptions& o) {
  HEARTH_RETURN_IF_ERROR(f.Read("max_pending_requests", &o.max_pending_requests));
  HEARTH_RETURN_IF_ERROR(f.Read("max_pending_bytes", &o.max_pending_bytes));
  HEARTH_RETURN_IF_ERROR(f.Read("reserved_pending_share", &o.reserved_pending_share));
  HEARTH_RETURN_IF_ERROR(f.Read("max_intake_per_plan", &o.max_intake_per_plan));
  HEARTH_RETURN_IF_ERROR(f.Read("max_label_bytes", &o.max_label_bytes));
  HEARTH_RETURN_IF_ERROR(f.ReadSeconds("max_arrival_lead_s", &o.max_arrival_lead));
  HEARTH_RETURN_IF_ERROR(f.ReadSeconds("workflow_retention_s", &o.workflow_retention));
  HEARTH_RETURN_IF_ERROR(f.Read("max_batched_tokens", &o.max_batched_tokens));
  HEARTH_RETURN_IF_ERROR(f.Read("max_running", &o.max_running));
  HEARTH_RETURN_IF_ERROR(f.Read("max_prefill_chunk_tokens", &o.max_prefill_chunk_tokens));
  HEARTH_RETURN_IF_ERROR(f.Read("max_draft_tokens", &o.max_draft_tokens));
  HEARTH_RETURN_IF_ERROR(f.Read("max_out_of_kv_reports", &o.max_out_of_kv_reports));
  HEARTH_RETURN_IF_ERROR(f.Read("overlap_planning", &o.overlap_planning));
  return f.Read("max_admission_declines", &o.max_admission_declines);
}

}  // namespace

absl::Status CheckPolicyName(std::string_view name) {
  for (std::string_view known : KnownPolicyNames()) {
    if (known == name) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("policy \"", AbslView(name.substr(0, 64)), "\" is unknown; known: ",
                   JoinNames(KnownPolicyNames())));
}

absl::Status ApplyOptionsJson(std::string_view text, hearth_options& options) {
  if (text.size() > kMaxOptionsJsonBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options JSON: ", text.size(), " bytes; at most ", kMaxOptionsJsonBytes));
  }
  if (const int depth = NestingDepth(text); depth > kMaxOptionsJsonDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options JSON: nested ", depth, " deep; at most ", kMaxOptionsJsonDepth));
  }
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("options JSON: ", e.what()));
  }
  JsonFields top(document, "");
  HEARTH_RETURN_IF_ERROR(top.CheckKeys({
      "models", "users", "work_classes", "kv", "residency", "policy", "vtc", "priority",
      "mlfq", "household", "workflow_head_start_s",
      "preemption_mode", "max_pending_requests", "max_pending_bytes",
      "reserved_pending_share", "max_intake_per_plan", "max_label_bytes",
      "max_arrival_lead_s", "workflow_retention_s", "max_batched_tokens",
      "max_running", "max_prefill_chunk_tokens", "max_admission_declines",
      "max_draft_tokens", "max_out_of_kv_reports", "overlap_planning", "metrics"}));
  SchedulerOptions& o = options.scheduler;
  HEARTH_RETURN_IF_ERROR(ReadList(top, "models", o.models, ReadModel));
  HEARTH_RETURN_IF_ERROR(ReadList(top, "users", o.users, ReadUser));
  HEARTH_RETURN_IF_ERROR(ReadWorkClasses(top, o));
  HEARTH_RETURN_IF_ERROR(ReadKv(top, o.kv));
  HEARTH_RETURN_IF_ERROR(ReadResidency(top, o.residency));
  HEARTH_RETURN_IF_ERROR(ReadPolicy(top, options));
  HEARTH_RETURN_IF_ERROR(ReadLimits(top, o));
  return ReadMetrics(top, options);
}

}  // namespace hearth::capi

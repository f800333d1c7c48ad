// File: src/policy/policy_validation.cc
//
// The validators of every policy configuration. Each message names the
// field, its value and what is allowed.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "hearth/policy/mlfq.h"
#include "hearth/policy/policy_tree.h"
#include "hearth/policy/priority_quota.h"
#include "hearth/policy/vtc.h"

namespace hearth {
namespace {

// InvalidArgument naming `field`[i] unless every weight is finite and > 0.
absl::Status ValidateShareWeights(absl::Span<const double> weights,
                                  std::string_view field) {
  for (size_t i = 0; i < weights.size(); ++i) {
    const double w = weights[i];
    if (!std::isfinite(w) || w <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          std::string(field), "[", i, "] is ", w, "; each weight must be finite and > 0"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateVtcOptions(const VtcOptions& options) {
  auto bad_weight = [](double w) { return !std::isfinite(w) || w < 0; };
  if (bad_weight(options.prompt_token_weight)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "VtcOptions::prompt_token_weight is ", options.prompt_token_weight,
        "; it must be finite and >= 0"));
  }
  if (bad_weight(options.decode_token_weight)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "VtcOptions::decode_token_weight is ", options.decode_token_weight,
        "; it must be finite and >= 0"));
  }
  if (options.prompt_token_weight == 0 && options.decode_token_weight == 0) {
    return absl::InvalidArgumentError(
        "VtcOptions::prompt_token_weight and decode_token_weight are both 0; "
        "at least one must be > 0 for counters to move");
  }
  if (!std::isfinite(options.admission_preemption_gap) ||
      options.admission_preemption_gap < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "VtcOptions::admission_preemption_gap is ",
        options.admission_preemption_gap, "; it must be finite and >= 0"));
  }
  return ValidateShareWeights(options.user_weights,
                                               "VtcOptions::user_weights");
}

absl::Status ValidatePriorityQuotaOptions(const PriorityQuotaOptions& options) {
  if (options.aging_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PriorityQuotaOptions::aging_interval is ",
        absl::FormatDuration(options.aging_interval),
        "; it must be > 0 (InfiniteDuration() disables aging)"));
  }
  if (options.quota_window <= absl::ZeroDuration() ||
      options.quota_window == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PriorityQuotaOptions::quota_window is ",
        absl::FormatDuration(options.quota_window),
        "; it must be > 0 and finite"));
  }
  if (!(options.kv_reserve >= 0 && options.kv_reserve < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PriorityQuotaOptions::kv_reserve is ", options.kv_reserve,
        "; it must be in [0, 1) (0: no trunk reservation)"));
  }
  absl::flat_hash_set<int32_t> seen;
  for (size_t i = 0; i < options.quotas.size(); ++i) {
    const LevelQuota& q = options.quotas[i];
    if (q.tokens_per_window < 0 || !(q.max_share >= 0 && q.max_share <= 1) ||
        (q.tokens_per_window == 0 && q.max_share == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PriorityQuotaOptions::quotas[", i, "] has tokens_per_window ",
          q.tokens_per_window, " and max_share ", q.max_share,
          "; tokens_per_window must be >= 0, max_share in [0, 1], and at "
          "least one of them set (omit the level for no quota)"));
    }
    if (!seen.insert(q.priority).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PriorityQuotaOptions::quotas[", i, "] repeats priority ", q.priority,
          "; each priority may have one quota"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMlfqOptions(const MlfqOptions& options) {
  if (options.num_levels < 1 || options.num_levels > 32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::num_levels is ", options.num_levels,
        "; it must be in [1, 32]"));
  }
  if (!std::isfinite(options.base_quantum) || options.base_quantum <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::base_quantum is ", options.base_quantum,
        "; it must be finite and > 0"));
  }
  if (!std::isfinite(options.prefill_token_cost) ||
      options.prefill_token_cost < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::prefill_token_cost is ", options.prefill_token_cost,
        "; it must be finite and >= 0"));
  }
  if (!std::isfinite(options.decode_token_cost) ||
      options.decode_token_cost < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::decode_token_cost is ", options.decode_token_cost,
        "; it must be finite and >= 0"));
  }
  if (options.max_preemptions_per_step < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::max_preemptions_per_step is ", options.max_preemptions_per_step,
        "; it must be >= 0 (0 turns time-slicing off)"));
  }
  if (options.starvation_bound <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::starvation_bound is ",
        absl::FormatDuration(options.starvation_bound),
        "; it must be > 0 (InfiniteDuration() turns the starving lane off)"));
  }
  if (!(options.starving_share > 0 && options.starving_share <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::starving_share is ", options.starving_share,
        "; it must be in (0, 1]"));
  }
  return absl::OkStatus();
}

absl::Status ValidatePolicyTreeConfig(const PolicyTreeConfig& config) {
  if (config.name.empty()) {
    return absl::InvalidArgumentError(
        "PolicyTreeConfig::name is empty; it must name the policy");
  }
  if (config.workflow_head_start < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PolicyTreeConfig::workflow_head_start is ",
        absl::FormatDuration(config.workflow_head_start),
        "; it must be >= 0 (InfiniteDuration: rank calls at their workflow's arrival)"));
  }
  if (!(config.background_kv_reserve >= 0 && config.background_kv_reserve < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PolicyTreeConfig::background_kv_reserve is ", config.background_kv_reserve,
        "; it must be in [0, 1) (a share of the KV blocks)"));
  }
  if (config.background_prefill_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PolicyTreeConfig::background_prefill_tokens is ", config.background_prefill_tokens,
        "; it must be >= 0 (0: no cap)"));
  }
  if (!(config.member_guard_gap >= 0 && std::isfinite(config.member_guard_gap))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PolicyTreeConfig::member_guard_gap is ", config.member_guard_gap,
        "; it must be >= 0 and finite (weighted tokens)"));
  }
  if (config.backfill_wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PolicyTreeConfig::backfill_wait is ", absl::FormatDuration(config.backfill_wait),
        "; it must be >= 0 (zero: head of line waits)"));
  }
  if (config.class_level == ClassLevel::kPriority || config.class_level == ClassLevel::kSlo) {
    absl::Status status = ValidatePriorityQuotaOptions(config.priority);
    if (!status.ok()) return status;
  }
  if (config.class_level == ClassLevel::kWeightedShares) {
    absl::Status status = ValidateShareWeights(
        config.class_weights, "PolicyTreeConfig::class_weights");
    if (!status.ok()) return status;
  }
  if (config.user_level == UserLevel::kVtc ||
      config.class_level == ClassLevel::kWeightedShares) {
    absl::Status status = ValidateVtcOptions(config.vtc);
    if (!status.ok()) return status;
  }
  if (config.request_level == RequestLevel::kMlfq) {
    absl::Status status = ValidateMlfqOptions(config.mlfq);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace hearth

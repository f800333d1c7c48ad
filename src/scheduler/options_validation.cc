// File: src/scheduler/options_validation.cc
//
// Validation of SchedulerOptions: every field by its rule in the table
// (options_schema.h), then the kRelated rules that relate fields to each
// other. RequestSpec's validation against the options is spec_validation.cc.

#include "scheduler/options_validation.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "hearth/common/names.h"
#include "internal/status_macros.h"
#include "scheduler/model_memory.h"
#include "scheduler/options_schema.h"

namespace hearth {

namespace internal {
namespace {

constexpr int32_t kMaxRunning = 1 << 20;

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("SchedulerOptions.", field, " ", what));
}

template <typename Config>
absl::Status ValidateNames(const std::vector<Config>& configs, absl::string_view field) {
  if (configs.empty()) return Invalid(field, "is empty; configure at least one entry");
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (configs[i].name.empty()) {
      return Invalid(absl::StrCat(field, "[", i, "].name"), "is empty; names must be non-empty");
    }
    HEARTH_RETURN_IF_ERROR(
        ValidateName(configs[i].name, absl::StrCat("SchedulerOptions.", field, "[", i, "].name")));
    if (!seen.insert(configs[i].name).second) {
      return Invalid(absl::StrCat(field, "[", i, "].name"),
                     absl::StrCat("\"", configs[i].name, "\" is used twice; names must be unique"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// An adapter's base: another model, itself a base, whose KV it shares.
absl::Status ValidateAdapter(const SchedulerOptions& o, size_t i) {
  const ModelConfig& m = o.models[i];
  if (m.base_model.empty()) return absl::OkStatus();
  const std::string field = absl::StrCat("models[", i, "].base_model");
  const int64_t found = BaseModelIndex(o, m);
  if (found < 0 || found == static_cast<int64_t>(i)) {
    return Invalid(field, absl::StrCat("names \"", absl::CHexEscape(m.base_model.substr(0, 64)),
                                       "\", which is not another model of SchedulerOptions.models"));
  }
  const auto base = o.models.begin() + found;
  if (!base->base_model.empty()) {
    return Invalid(field, absl::StrCat("names \"", m.base_model.substr(0, 64),
                                       "\", itself an adapter; an adapter's base must be a base model"));
  }
  if (m.kv_bytes_per_token != 0 && m.kv_bytes_per_token != base->kv_bytes_per_token) {
    return Invalid(absl::StrCat("models[", i, "].kv_bytes_per_token"),
                   absl::StrCat("is ", m.kv_bytes_per_token, "; an adapter shares its base's KV: 0 or ",
                                base->kv_bytes_per_token));
  }
  if (m.vocab_size != 0 && m.vocab_size != base->vocab_size) {
    return Invalid(absl::StrCat("models[", i, "].vocab_size"),
                   absl::StrCat("is ", m.vocab_size, "; an adapter shares its base's vocabulary: 0 or ",
                                base->vocab_size));
  }
  if (m.context_length > base->context_length) {
    return Invalid(absl::StrCat("models[", i, "].context_length"),
                   absl::StrCat("is ", m.context_length, "; an adapter's is at most its base's (",
                                base->context_length, ")"));
  }
  if (o.residency.device_memory_bytes > 0 && m.preload && !base->preload) {
    return Invalid(absl::StrCat("models[", i, "].preload"),
                   absl::StrCat("is true but its base \"", base->name.substr(0, 64),
                                "\" is not preloaded; an adapter is resident only with its base"));
  }
  return absl::OkStatus();
}

// Check() of one field's value, whatever its type: the table's rule for
// numbers and durations; names, flags and enums have none of their own.
absl::Status Check(const OptionField& f, std::string_view prefix, int32_t v) {
  return CheckField(f, prefix, int64_t{v});
}
absl::Status Check(const OptionField& f, std::string_view prefix, int64_t v) {
  return CheckField(f, prefix, v);
}
absl::Status Check(const OptionField& f, std::string_view prefix, double v) {
  return CheckField(f, prefix, v);
}
absl::Status Check(const OptionField& f, std::string_view prefix, absl::Duration v) {
  return CheckField(f, prefix, v);
}
template <typename T>
absl::Status Check(const OptionField&, std::string_view, const T&) {
  return absl::OkStatus();
}

// Every field by its rule in options_schema.h; the first broken one.
absl::Status ValidateTable(const SchedulerOptions& o) {
  absl::Status status;
  std::string prefix;
  auto check = [&](const OptionField& f, const auto& value) {
    if (status.ok()) status = Check(f, prefix, value);
  };
  for (size_t i = 0; i < o.models.size() && status.ok(); ++i) {
    prefix = absl::StrCat("SchedulerOptions.models[", i, "].");
    VisitModelFields(o.models[i], check);
  }
  for (size_t i = 0; i < o.users.size() && status.ok(); ++i) {
    prefix = absl::StrCat("SchedulerOptions.users[", i, "].");
    VisitUserFields(o.users[i], check);
  }
  for (size_t i = 0; i < o.work_classes.size() && status.ok(); ++i) {
    prefix = absl::StrCat("SchedulerOptions.work_classes[", i, "].");
    VisitWorkClassFields(o.work_classes[i], check);
  }
  prefix = "SchedulerOptions.";
  if (status.ok()) VisitOptionFields(o, check);
  return status;
}

// The kRelated fields of the table.

absl::Status ValidateModels(const SchedulerOptions& o) {
  for (size_t i = 0; i < o.models.size(); ++i) HEARTH_RETURN_IF_ERROR(ValidateAdapter(o, i));
  return absl::OkStatus();
}

absl::Status ValidateWorkClasses(const SchedulerOptions& o) {
  for (size_t i = 0; i < o.work_classes.size(); ++i) {
    const WorkClassConfig& c = o.work_classes[i];
    if (c.kv_block_budget < 0 || c.kv_block_budget > o.kv.num_device_blocks) {
      return Invalid(absl::StrCat("work_classes[", i, "].kv_block_budget"),
                     absl::StrCat("is ", c.kv_block_budget, "; must be in [0, kv.num_device_blocks = ",
                                  o.kv.num_device_blocks, "] (0: no budget)"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateKvCache(const SchedulerOptions& o) {
  const KvCacheConfig& kv = o.kv;
  if (kv.watermark_blocks < 0 || kv.watermark_blocks >= kv.num_device_blocks) {
    return Invalid("kv.watermark_blocks",
                   absl::StrCat("is ", kv.watermark_blocks, "; must be in [0, num_device_blocks = ",
                                kv.num_device_blocks, ")"));
  }
  if (o.preemption_mode != PreemptionMode::kRecompute && o.preemption_mode != PreemptionMode::kSwap) {
    return Invalid("preemption_mode", absl::StrCat("is ", static_cast<int>(o.preemption_mode),
                                                   "; must be kRecompute or kSwap"));
  }
  if (o.preemption_mode == PreemptionMode::kSwap && kv.num_host_blocks == 0) {
    return Invalid("preemption_mode", "is kSwap but kv.num_host_blocks is 0; configure a host tier "
                                      "or use kRecompute");
  }
  return absl::OkStatus();
}

absl::Status ValidateResidentModel(const SchedulerOptions& o, size_t i, int64_t block_bytes) {
  const ModelConfig& m = o.models[i];
  const std::string field = absl::StrCat("models[", i, "]");
  if (m.kv_bytes_per_token <= 0 && m.base_model.empty()) {
    return Invalid(field + ".kv_bytes_per_token",
                   absl::StrCat("is ", m.kv_bytes_per_token, "; residency needs it > 0 to size KV"));
  }
  // Compared by subtraction: weights_bytes + block_bytes could wrap. An
  // adapter is resident beside its base (checked first, so its weights are
  // in range).
  const int64_t base = BaseWeights(o, m);
  if (m.weights_bytes < 0 || m.weights_bytes > o.residency.device_memory_bytes - block_bytes - base) {
    return Invalid(field + ".weights_bytes",
                   absl::StrCat("is ", m.weights_bytes, "; must be >= 0 and leave room for at least one KV block (",
                                block_bytes, " bytes)", base > 0 ? absl::StrCat(" beside its base's ", base) : "",
                                " in residency.device_memory_bytes = ",
                                o.residency.device_memory_bytes));
  }
  return absl::OkStatus();
}

absl::Status ValidateResidency(const SchedulerOptions& o) {
  if (o.residency.device_memory_bytes > 0 && o.residency.max_resident_adapters > 0) {
    const auto preloaded = std::count_if(o.models.begin(), o.models.end(), [](const ModelConfig& m) {
      return !m.base_model.empty() && m.preload;
    });
    if (preloaded > o.residency.max_resident_adapters) {
      return Invalid("residency.max_resident_adapters",
                     absl::StrCat("is ", o.residency.max_resident_adapters, " but ", preloaded,
                                  " adapters are preloaded"));
    }
  }
  if (o.residency.device_memory_bytes > 0) {
    int64_t preloaded = 0;
    const int64_t block_bytes = MaxBlockBytes(o);
    for (size_t i = 0; i < o.models.size(); ++i) {
      HEARTH_RETURN_IF_ERROR(ValidateResidentModel(o, i, block_bytes));
      if (!o.models[i].preload) continue;
      // Compared by subtraction: the sum of hostile weights would wrap.
      const int64_t weights = o.models[i].weights_bytes;
      if (weights > o.residency.device_memory_bytes - preloaded) {
        return Invalid(absl::StrCat("models[", i, "].preload"),
                       absl::StrCat("models to preload weigh more than residency.device_memory_bytes = ",
                                    o.residency.device_memory_bytes, " (", preloaded,
                                    " bytes before this model's ", weights, ")"));
      }
      preloaded += weights;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateLimits(const SchedulerOptions& o) {
  // Per-step buffers are reserved for these at construction, so their
  // bounds are what Create can allocate, far above any engine's step.
  if (o.max_running < 1 || o.max_running > std::min(o.max_batched_tokens, kMaxRunning)) {
    return Invalid("max_running", absl::StrCat("is ", o.max_running, "; must be in [1, min(2^20, max_batched_tokens = ",
                                               o.max_batched_tokens, ")] so every running sequence can decode each step"));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t BaseModelIndex(const SchedulerOptions& o, const ModelConfig& m) {
  if (m.base_model.empty()) return -1;
  for (size_t b = 0; b < o.models.size(); ++b) {
    if (o.models[b].name == m.base_model) return static_cast<int64_t>(b);
  }
  return -1;
}

absl::Status ValidateOptions(const SchedulerOptions& o) {
  for (auto s : {ValidateNames(o.models, "models"), ValidateNames(o.users, "users"),
                 ValidateNames(o.work_classes, "work_classes")}) {
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < o.users.size(); ++i) {
    if (o.users[i].name == kOtherUsersName) {
      return Invalid(absl::StrCat("users[", i, "].name"),
                     absl::StrCat("is \"", kOtherUsersName,
                                  "\", which is reserved: Prometheus series sum the users beyond "
                                  "PrometheusOptions::max_user_series under it"));
    }
  }
  for (auto check : {ValidateTable, ValidateModels, ValidateWorkClasses, ValidateKvCache,
                     ValidateResidency, ValidateLimits}) {
    if (absl::Status s = check(o); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace hearth

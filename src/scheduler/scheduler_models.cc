// File: src/scheduler/scheduler_models.cc
//
// Models at run time: AddModel and RemoveModel on host threads (validated
// as Create validates the options, against the models registered then), and
// the engine's side, which grows its per-model state from the registry
// before taking in requests that may name a new model.

#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "scheduler/options_validation.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

absl::StatusOr<ModelId> Scheduler::Impl::AddModel(ModelConfig config) {
  std::lock_guard<std::mutex> lock(model_writes_mu_);
  const bool residency = options_.residency.device_memory_bytes > 0;
  // Preloading is how Create starts; a model added later becomes resident
  // when its first request loads it, so it never counts among the preloaded.
  if (residency) config.preload = false;
  // The options as Create would see them with this model among those
  // registered now: names unique, an adapter's base a base model, every
  // field in its range, weights leaving room for KV.
  SchedulerOptions candidate = options_;
  candidate.models.clear();
  std::vector<ModelId> ids;
  models_.Live(&candidate.models, &ids);
  const size_t index = candidate.models.size();
  candidate.models.push_back(config);
  if (absl::Status s = internal::ValidateOptions(candidate); !s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat("AddModel: ",
                               absl::StrReplaceAll(s.message(),
                                                   {{absl::StrCat("SchedulerOptions.models[", index, "]"),
                                                     "ModelConfig"},
                                                    {absl::StrCat("models[", index, "]"), "ModelConfig"}})));
  }
  // The KV pool was cut into blocks at Create for the largest model then.
  if (residency && config.base_model.empty() &&
      config.kv_bytes_per_token * options_.kv.block_size > residency_.block_bytes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AddModel: ModelConfig.kv_bytes_per_token is ", config.kv_bytes_per_token,
        "; a model added at run time shares the KV blocks sized at Create, so it may take at "
        "most ", residency_.block_bytes() / options_.kv.block_size, " bytes per token"));
  }
  int32_t base = -1;
  if (const int64_t b = internal::BaseModelIndex(candidate, config); b >= 0) {
    base = static_cast<int32_t>(ids[static_cast<size_t>(b)].value());
    const ModelConfig& base_config = candidate.models[static_cast<size_t>(b)];
    if (config.vocab_size == 0) config.vocab_size = base_config.vocab_size;
    if (config.kv_bytes_per_token == 0) config.kv_bytes_per_token = base_config.kv_bytes_per_token;
  }
  return inbox_.AddModel(std::move(config), base);
}

absl::Status Scheduler::Impl::RemoveModel(ModelId model) {
  std::lock_guard<std::mutex> lock(model_writes_mu_);
  return inbox_.RemoveModel(model);
}

void Scheduler::Impl::SyncModels() {
  const uint64_t version = models_.version();
  if (version == models_version_seen_) return;
  models_version_seen_ = version;
  const auto n = static_cast<size_t>(models_.size());
  for (size_t i = models_removed_seen_.size(); i < n; ++i) {
    const internal::ModelEntry& e = *models_.Get(ModelId(static_cast<uint32_t>(i)));
    residency_.AddModel(e.config, e.base);
    model_queues_.preparing.emplace_back();
    limits_.context_length.push_back(e.config.context_length);
    limits_.vocab_size.push_back(e.config.vocab_size);
    models_removed_seen_.push_back(false);
  }
  for (size_t i = 0; i < n; ++i) {
    const ModelId m(static_cast<uint32_t>(i));
    if (models_removed_seen_[i] || !models_.Get(m)->removed.load(std::memory_order_acquire)) continue;
    models_removed_seen_[i] = true;
    residency_.RemoveModel(m);
    // Only entries of requests that ended can be left.
    std::vector<std::pair<uint32_t, RequestId>>().swap(model_queues_.preparing[i]);
  }
}

}  // namespace hearth

#include "scheduler/model_registry.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "scheduler/options_validation.h"

namespace hearth::internal {

ModelRegistry::ModelRegistry(const std::vector<ModelConfig>& models) {
  // Create's options hold at most what validation allows; the registry's
  // bound is for run-time additions.
  owned_.reserve(std::min<size_t>(models.size() + 16, kMaxModels));
  SchedulerOptions lookup;
  lookup.models = models;
  for (const ModelConfig& m : models) {
    const auto base = static_cast<int32_t>(BaseModelIndex(lookup, m));
    (void)Append(m, base);
  }
}

absl::StatusOr<ModelId> ModelRegistry::Find(std::string_view name) const {
  const int32_t n = size();
  for (int32_t i = 0; i < n; ++i) {
    const ModelEntry* e = Get(ModelId(static_cast<uint32_t>(i)));
    if (e->config.name == name && !e->removed.load(std::memory_order_acquire)) {
      return ModelId(static_cast<uint32_t>(i));
    }
  }
  std::string known;
  for (int32_t i = 0; i < n; ++i) {
    const ModelEntry* e = Get(ModelId(static_cast<uint32_t>(i)));
    if (!e->removed.load(std::memory_order_acquire)) {
      absl::StrAppend(&known, known.empty() ? "" : ", ", e->config.name);
    }
  }
  // The name may come from anyone (a request's JSON, say): escaped and cut.
  return absl::NotFoundError(absl::StrCat(
      "no model named \"",
      absl::CHexEscape(absl::string_view(name.data(), std::min<size_t>(name.size(), 64))),
      name.size() > 64 ? "\"...; registered: " : "\"; registered: ",
      known.empty() ? "(none)" : known));
}

void ModelRegistry::Live(std::vector<ModelConfig>* configs, std::vector<ModelId>* ids) const {
  const int32_t n = size();
  for (int32_t i = 0; i < n; ++i) {
    const ModelEntry* e = Get(ModelId(static_cast<uint32_t>(i)));
    if (e->removed.load(std::memory_order_acquire)) continue;
    if (configs != nullptr) configs->push_back(e->config);
    if (ids != nullptr) ids->push_back(ModelId(static_cast<uint32_t>(i)));
  }
}

absl::StatusOr<ModelId> ModelRegistry::Append(ModelConfig config, int32_t base) {
  const int32_t id = size_.load(std::memory_order_relaxed);
  if (id >= kMaxModels) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "all ", kMaxModels, " model ids of this scheduler are taken (ids of removed models are "
        "never reused, so that nothing cached for one is read as another's)"));
  }
  auto entry = std::make_unique<ModelEntry>();
  entry->config = std::move(config);
  entry->base = base;
  slots_[static_cast<size_t>(id)].store(entry.get(), std::memory_order_release);
  owned_.push_back(std::move(entry));
  size_.store(id + 1, std::memory_order_release);
  version_.fetch_add(1, std::memory_order_acq_rel);
  return ModelId(static_cast<uint32_t>(id));
}

void ModelRegistry::MarkRemoved(ModelId m) {
  owned_[m.value()]->removed.store(true, std::memory_order_release);
  version_.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace hearth::internal

// File: src/scheduler/model_registry.h
//
// The scheduler's models by id, those given at Create and those added at run
// time (Scheduler::AddModel), readable from any thread without a lock: a
// slot is published once, with release, and its config never changes after;
// only its removed flag does. Submit threads validate against it while a host
// thread adds or removes models and the engine grows its per-model state from
// it. Ids are slot indices and are never reused, so nothing keyed by a
// removed model's id (its cached prefix blocks, say) can be mistaken for a
// later model's.
//
// Writers (Append, MarkRemoved) are serialised by the caller.

#ifndef HEARTH_SCHEDULER_MODEL_REGISTRY_H_
#define HEARTH_SCHEDULER_MODEL_REGISTRY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/common/ids.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth::internal {

struct ModelEntry {
  // Normalised: an adapter's 0 vocab_size and kv_bytes_per_token read as
  // its base's.
  ModelConfig config;
  // The base model's id, or -1 for a base model.
  int32_t base = -1;
  std::atomic<bool> removed{false};
};

class ModelRegistry {
 public:
  // Models registered over a scheduler's life, removed ones included.
  static constexpr int32_t kMaxModels = 4096;

  // `models` as Create validated and normalised them.
  explicit ModelRegistry(const std::vector<ModelConfig>& models);

  // Any thread. The entry of `m`, removed or not; null for an id never
  // registered.
  const ModelEntry* Get(ModelId m) const {
    if (!m.valid() || m.value() >= static_cast<uint32_t>(kMaxModels)) return nullptr;
    return slots_[m.value()].load(std::memory_order_acquire);
  }
  // Any thread. Ids registered so far: [0, size()).
  int32_t size() const { return size_.load(std::memory_order_acquire); }
  // Any thread. Bumped by every Append and MarkRemoved, so the engine can
  // tell at one load whether it must look again.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  // Any thread. The model of that name that is not removed; NotFound lists
  // those there are.
  absl::StatusOr<ModelId> Find(std::string_view name) const;
  // Any thread. The configs of the models not removed, in id order, with
  // their ids.
  void Live(std::vector<ModelConfig>* configs, std::vector<ModelId>* ids) const;

  // Writer. ResourceExhausted once kMaxModels ids are taken.
  absl::StatusOr<ModelId> Append(ModelConfig config, int32_t base);
  // Writer.
  void MarkRemoved(ModelId m);

 private:
  std::array<std::atomic<const ModelEntry*>, kMaxModels> slots_{};
  std::atomic<int32_t> size_{0};
  std::atomic<uint64_t> version_{0};
  // Writer only: owns what slots_ points at.
  std::vector<std::unique_ptr<ModelEntry>> owned_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_MODEL_REGISTRY_H_

// File: src/scheduler/model_memory.cc
//
// What a model takes of device memory, as both validations size it
// (options_validation.cc, spec_validation.cc): the largest KV block and an
// adapter's base weights.

#include "scheduler/model_memory.h"

#include <algorithm>
#include <cstdint>

#include "scheduler/options_validation.h"

namespace hearth {

namespace internal {

int64_t MaxBlockBytes(const SchedulerOptions& o) {
  int64_t block_bytes = 0;
  for (const ModelConfig& m : o.models) {
    block_bytes = std::max(block_bytes, m.kv_bytes_per_token * o.kv.block_size);
  }
  return block_bytes;
}

int64_t BaseWeights(const SchedulerOptions& o, const ModelConfig& m) {
  const int64_t base = BaseModelIndex(o, m);
  if (base < 0) return 0;
  return std::clamp<int64_t>(o.models[static_cast<size_t>(base)].weights_bytes, 0,
                             o.residency.device_memory_bytes);
}

}  // namespace internal
}  // namespace hearth

// File: src/scheduler/model_memory.h
//
// What a model takes of device memory, as the validation of the options
// (options_validation.cc) and of each RequestSpec (spec_validation.cc) both
// size it.

#ifndef HEARTH_SCHEDULER_MODEL_MEMORY_H_
#define HEARTH_SCHEDULER_MODEL_MEMORY_H_

#include <cstdint>

#include "hearth/scheduler/scheduler_options.h"

namespace hearth::internal {

// The largest KV block of any model in `o`, in bytes.
int64_t MaxBlockBytes(const SchedulerOptions& o);

// The weights of `m`'s base when `m` is an adapter, else 0; clamped to the
// device memory, since the base may not have been validated yet.
int64_t BaseWeights(const SchedulerOptions& o, const ModelConfig& m);

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_MODEL_MEMORY_H_

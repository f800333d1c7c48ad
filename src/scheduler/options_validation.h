// File: src/scheduler/options_validation.h
//
// Validation of SchedulerOptions and RequestSpec against them. Pure functions
// of immutable data (and the lock-free model registry), so Submit can call
// them from any thread.

#ifndef HEARTH_SCHEDULER_OPTIONS_VALIDATION_H_
#define HEARTH_SCHEDULER_OPTIONS_VALIDATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "hearth/request/request_spec.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth::internal {

absl::Status ValidateOptions(const SchedulerOptions& options);
// The index in options.models of `model`'s base (ModelConfig::base_model),
// or -1 for a base model or a name no model has.
int64_t BaseModelIndex(const SchedulerOptions& options, const ModelConfig& model);
// The resolved encoder limits: max_encoder_tokens_per_step and
// encoder_cache_tokens with their 0 defaults applied.
inline int32_t EncoderBudgetPerStep(const SchedulerOptions& o) {
  return o.max_encoder_tokens_per_step > 0 ? o.max_encoder_tokens_per_step : o.max_batched_tokens;
}
inline int32_t EncoderCacheTokens(const SchedulerOptions& o) {
  return o.encoder_cache_tokens > 0 ? o.encoder_cache_tokens : EncoderBudgetPerStep(o);
}
class ModelRegistry;
// `spec` against `options` and its model's entry in `models` (unknown or
// removed models are refused).
absl::Status ValidateSpec(const RequestSpec& spec, const SchedulerOptions& options,
                          const ModelRegistry& models);

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_OPTIONS_VALIDATION_H_

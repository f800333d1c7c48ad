// File: src/scheduler/options_validation.h
//
// Validation of SchedulerOptions and RequestSpec against them. Pure functions
// of immutable data, so Submit can call them from any thread.

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
absl::Status ValidateSpec(const RequestSpec& spec,
                          const SchedulerOptions& options);

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_OPTIONS_VALIDATION_H_

// The policies' own settings from the options JSON (hearth/c/hearth.h lists
// the keys): "vtc", "priority", "mlfq", "household" and
// "workflow_head_start_s", each read into PolicyConfig.

#ifndef HEARTH_SRC_CAPI_POLICY_JSON_H_
#define HEARTH_SRC_CAPI_POLICY_JSON_H_

#include "absl/status/status.h"
#include "capi/json_fields.h"
#include "hearth/policy/policy_registry.h"

namespace hearth::capi {

// Leaves absent keys at their defaults; InvalidArgument naming the field for
// unknown keys and values of the wrong type. Ranges are checked when the
// scheduler is created (MakePolicyFactory names the field then).
absl::Status ReadPolicyConfig(const JsonFields& top, PolicyConfig& config);

}  // namespace hearth::capi

#endif  // HEARTH_SRC_CAPI_POLICY_JSON_H_

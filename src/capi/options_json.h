// Scheduler options from a JSON object, for hearth_options_from_json().

#ifndef HEARTH_SRC_CAPI_OPTIONS_JSON_H_
#define HEARTH_SRC_CAPI_OPTIONS_JSON_H_

#include <string_view>

#include "absl/status/status.h"
#include "capi/c_handles.h"

namespace hearth::capi {

// The largest JSON text accepted, and how deeply it may nest: options are a
// few kilobytes two levels deep, so anything near these limits is a mistake
// (or an attack on the parser), not a configuration.
inline constexpr size_t kMaxOptionsJsonBytes = size_t{16} << 20;
inline constexpr int kMaxOptionsJsonDepth = 16;

// Applies the keys of `text` (hearth/c/hearth.h lists them) to `options`.
// InvalidArgument naming the key for unknown keys, values of the wrong type
// or range, and malformed JSON; `options` may be partly written then.
absl::Status ApplyOptionsJson(std::string_view text, hearth_options& options);

// Reads one model (the keys of an options "models" entry) from `text` into
// `model`, for hearth_scheduler_add_model(); errors as ApplyOptionsJson's.
absl::Status ApplyModelJson(std::string_view text, ModelConfig& model);

// InvalidArgument listing the known policies unless `name` is one of them.
absl::Status CheckPolicyName(std::string_view name);

}  // namespace hearth::capi

#endif  // HEARTH_SRC_CAPI_OPTIONS_JSON_H_

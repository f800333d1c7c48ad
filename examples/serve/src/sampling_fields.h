// File: examples/serve/src/sampling_fields.h
//
// The sampling and stop fields that OpenAI's bodies carry at their top
// level and Ollama's in their "options" object, read with one set of rules:
// each in the range openai_request.h documents for SamplingParams, each
// error naming the field as the client spelled it (`prefix` + name, e.g.
// "options.top_k"). Never throws.
//
// Example:
//   SamplingParams p;
//   absl::Status s = ReadSamplingFields(body["options"], "options.", p);

#ifndef HEARTH_SERVE_SAMPLING_FIELDS_H_
#define HEARTH_SERVE_SAMPLING_FIELDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "openai_request.h"

namespace hearth::serve {

// temperature, top_p, top_k, min_p, repeat_penalty, presence_penalty,
// frequency_penalty and seed; absent or null fields keep `p`'s values.
// REQUIRES: `object` is a JSON object.
absl::Status ReadSamplingFields(const nlohmann::json& object, absl::string_view prefix,
                                SamplingParams& p);

// "stop": a string or an array of at most kMaxStopStrings strings of 1 to
// kMaxStopBytes bytes, appended to `stop`. REQUIRES: `object` is an object.
absl::Status ReadStopField(const nlohmann::json& object, absl::string_view prefix,
                           std::vector<std::string>& stop);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_SAMPLING_FIELDS_H_

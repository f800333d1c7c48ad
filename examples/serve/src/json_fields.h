// File: examples/serve/src/json_fields.h
//
// What every JSON request parser of hearth-serve starts from: the body as
// one JSON object, and the InvalidArgument for a field, naming it in its
// message and in the OpenAI error's `param` (error_param.h). Never throws.
//
// Example:
//   absl::StatusOr<nlohmann::json> j = ParseJsonObject(body);
//   if (!j->contains("model")) return BadField("model", "is required");

#ifndef HEARTH_SERVE_JSON_FIELDS_H_
#define HEARTH_SERVE_JSON_FIELDS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "error_param.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {

// "'<field>' <allowed>", with `field` as the error's param.
inline absl::Status BadField(absl::string_view field, absl::string_view allowed) {
  return WithParam(absl::InvalidArgumentError(absl::StrCat("'", field, "' ", allowed)), field);
}

inline absl::StatusOr<nlohmann::json> ParseJsonObject(absl::string_view body) {
  nlohmann::json j = nlohmann::json::parse(body, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("the body is not valid JSON");
  if (!j.is_object()) return absl::InvalidArgumentError("the body must be a JSON object");
  return j;
}

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_JSON_FIELDS_H_

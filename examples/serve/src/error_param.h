// File: examples/serve/src/error_param.h
//
// Carries the request field an InvalidArgument is about, from the parsers
// (through json_fields.h's BadField) to the OpenAI error body's
// `param` (openai_response.h), which the OpenAI SDKs expose as
// `error.param`. A Status payload, so the parsers' signatures stay Status.
//
// Example:
//   return WithParam(absl::InvalidArgumentError("'top_k' must be ..."), "top_k");
//   std::optional<std::string> param = ParamOf(status);  // "top_k"

#ifndef HEARTH_SERVE_ERROR_PARAM_H_
#define HEARTH_SERVE_ERROR_PARAM_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

namespace hearth::serve {

inline constexpr absl::string_view kErrorParamPayload = "type.hearth/serve.error_param";

inline absl::Status WithParam(absl::Status status, absl::string_view field) {
  status.SetPayload(kErrorParamPayload, absl::Cord(field));
  return status;
}

inline std::optional<std::string> ParamOf(const absl::Status& status) {
  // absl::optional, which Debian's Abseil does not alias to std::optional.
  auto param = status.GetPayload(kErrorParamPayload);
  if (!param) return std::nullopt;
  return std::string(*param);
}

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_ERROR_PARAM_H_

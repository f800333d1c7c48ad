// File: examples/serve/src/unsupported_fields.h
//
// The OpenAI (and llama-server) request fields hearth-serve does not
// implement. Each is accepted only at its neutral value, the one that asks
// for nothing the server does not do (`"n": 1`, `"tools": []`,
// `"json_schema": {}`); any other value is
// InvalidArgument naming the field and what is allowed, so that a client is
// never silently given something else than it asked for. (logprobs,
// logit_bias, grammar and response_format are implemented: openai_request.h.)
// Fields not listed here and not read by openai_request.cc (`user`, `metadata`, `store`,
// `service_tier`, a client's own extras) change nothing in an answer and
// are ignored.
//
// Example:
//   absl::Status s = RejectUnsupportedFields(body);  // body: nlohmann::json object

#ifndef HEARTH_SERVE_UNSUPPORTED_FIELDS_H_
#define HEARTH_SERVE_UNSUPPORTED_FIELDS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {

// REQUIRES: `body` is a JSON object. OK when every listed field is absent,
// null or neutral; else the first offending field's InvalidArgument.
absl::Status RejectUnsupportedFields(const nlohmann::json& body);

// One field another API's table (ollama_request.cc) lists: accepted only
// when `neutral` says so.
struct UnsupportedField {
  const char* field;
  bool (*neutral)(const nlohmann::json&);
  // What the error says is allowed.
  const char* allowed;
};

// RejectUnsupportedFields for `fields`, the error naming `prefix` + field.
// REQUIRES: `object` is a JSON object.
absl::Status RejectFields(const nlohmann::json& object, absl::Span<const UnsupportedField> fields,
                          absl::string_view prefix = "");

// The neutral values the tables share.
namespace neutral {
bool IsFalse(const nlohmann::json& v);
bool IsZero(const nlohmann::json& v);
// "", [] or {}.
bool IsEmpty(const nlohmann::json& v);
bool IsPenaltyWindow(const nlohmann::json& v);
bool OnlyAbsent(const nlohmann::json& v);
}  // namespace neutral

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_UNSUPPORTED_FIELDS_H_

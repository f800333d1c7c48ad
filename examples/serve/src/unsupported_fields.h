// File: examples/serve/src/unsupported_fields.h
//
// The OpenAI (and llama-server) request fields hearth-serve does not
// implement. Each is accepted only at its neutral value, the one that asks
// for nothing the server does not do (`"n": 1`, `"tools": []`); any other
// value is InvalidArgument naming the field and what is allowed, so that a
// client is never silently given something else than it asked for.
// (logprobs, logit_bias, grammar, response_format and json_schema are
// implemented: openai_request.h.)
// Any other field is refused too (RejectUnknownFields), unless it is one of
// kInformationalFields, which change no answer even at OpenAI: a field the
// server neither reads nor lists is never silently dropped.
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

// Fields accepted with any value because they change no answer, at OpenAI
// either: `user` and `safety_identifier` name an end user for abuse
// monitoring (hearth-serve's member is its key's), `metadata` tags a stored
// completion (and `store` is refused).
inline constexpr absl::string_view kInformationalFields[] = {"user", "safety_identifier",
                                                             "metadata"};

// REQUIRES: `body` is a JSON object. OK when each of its fields is in
// `read` (what the endpoint's parser reads), in the unsupported table or in
// kInformationalFields (or null); else InvalidArgument naming the first
// other one (only its length, when the name is too long or odd to repeat).
absl::Status RejectUnknownFields(const nlohmann::json& body,
                                 absl::Span<const absl::string_view> read);

// REQUIRES: `object` is a JSON object. OK when each of its non-null fields
// is in `read`; else InvalidArgument naming `prefix` + the first other one.
absl::Status RejectOtherFields(const nlohmann::json& object,
                               absl::Span<const absl::string_view> read, absl::string_view prefix);

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

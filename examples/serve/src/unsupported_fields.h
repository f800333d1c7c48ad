// File: examples/serve/src/unsupported_fields.h
//
// The OpenAI (and llama-server) request fields hearth-serve does not
// implement. Each is accepted only at its neutral value, the one that asks
// for nothing the server does not do (`"n": 1`, `"response_format":
// {"type": "text"}`, `"logit_bias": {}`); any other value is
// InvalidArgument naming the field and what is allowed, so that a client is
// never silently given something else than it asked for. Fields not listed
// here and not read by openai_request.cc (`user`, `metadata`, `store`,
// `service_tier`, a client's own extras) change nothing in an answer and
// are ignored.
//
// Example:
//   absl::Status s = RejectUnsupportedFields(body);  // body: nlohmann::json object

#ifndef HEARTH_SERVE_UNSUPPORTED_FIELDS_H_
#define HEARTH_SERVE_UNSUPPORTED_FIELDS_H_

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {

// REQUIRES: `body` is a JSON object. OK when every listed field is absent,
// null or neutral; else the first offending field's InvalidArgument.
absl::Status RejectUnsupportedFields(const nlohmann::json& body);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_UNSUPPORTED_FIELDS_H_

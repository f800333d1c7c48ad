// File: examples/serve/src/response_request_id.h
//
// The `X-Request-Id` every response carries, so that a household's client
// and its logs can name one exchange. A client that sent exactly one
// X-Request-Id of 1 to kMaxClientRequestIdBytes visible ASCII characters
// (0x21-0x7E: no spaces, no control bytes) gets it back as sent; any other
// value (too long, a space, a byte outside ASCII, two headers) is ignored,
// not refused -- a tracing header should never cost a household its
// answer -- and the response carries a fresh id instead: "req_" and 32
// random hex digits (random_hex.h). An id is computed from the request
// alone, so no response repeats anything of another request's, or another
// member's.
//
// Example:
//   res.set_header(kRequestIdHeader,
//                  ResponseRequestId(RawHeaderValues(req.headers, kRequestIdHeader)));

#ifndef HEARTH_SERVE_RESPONSE_REQUEST_ID_H_
#define HEARTH_SERVE_RESPONSE_REQUEST_ID_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace hearth::serve {

inline constexpr char kRequestIdHeader[] = "X-Request-Id";
// Longer than any tracing id in use (a UUID is 36, a W3C traceparent 55).
inline constexpr size_t kMaxClientRequestIdBytes = 128;

// Whether a client's value is echoed.
bool IsEchoableRequestId(absl::string_view value);

// A fresh id: "req_" and 32 random hex digits.
std::string NewRequestId();

// `sent`: every X-Request-Id value of the request, raw (raw_head.h).
std::string ResponseRequestId(const std::vector<absl::string_view>& sent);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_RESPONSE_REQUEST_ID_H_

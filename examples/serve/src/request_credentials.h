// File: examples/serve/src/request_credentials.h
//
// The API key a request presents, read from its header field values as they
// came off the wire (raw_head.h: no percent-decoding, NUL bytes kept), by
// the rules of RFC 9110 section 11 (HTTP authentication, formerly RFC 7235):
//
//   Authorization: <scheme> 1*(SP / HTAB) <token68>
//     the scheme is case-insensitive: "Bearer" (the token is the key) or
//     "Basic" (base64 of "user:key": what a browser sends once it asked for
//     a name and a password; the user part is ignored). RFC 9110 asks for
//     spaces between scheme and token; tabs are accepted as well.
//   X-Api-Key: <token68>
//     the key itself (what some OpenAI-compatible clients send).
//
// Leading and trailing whitespace of a field value is not part of it (OWS).
// A key is a token68 (letters, digits, "-._~+/", then "=" padding): a value
// with any other byte (a "%", a NUL, a space inside) is refused whole, never
// cut or decoded into a key. More than one Authorization or X-Api-Key
// field, or both naming different keys, are refused: which one counts
// would otherwise depend on the reader.
//
// Errors are Unauthenticated and never quote what was presented.
//
// Thread-safety: plain functions.
//
// Example:
//   absl::StatusOr<std::string> key = PresentedKey({"BEARER\tsk-ana"}, {});  // "sk-ana"

#ifndef HEARTH_SERVE_REQUEST_CREDENTIALS_H_
#define HEARTH_SERVE_REQUEST_CREDENTIALS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hearth::serve {

// Whether `text` is a token68 (RFC 9110 section 11.2): 1*( ALPHA / DIGIT /
// "-" / "." / "_" / "~" / "+" / "/" ) *"=".
bool IsToken68(absl::string_view text);

// PresentedKey()
//
// The key carried by the request's Authorization and X-Api-Key field
// values (every value of each, in order). Empty when the request carries
// neither field; Unauthenticated for a malformed or ambiguous credential.
absl::StatusOr<std::string> PresentedKey(const std::vector<absl::string_view>& authorization,
                                         const std::vector<absl::string_view>& api_key);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_REQUEST_CREDENTIALS_H_

// File: examples/serve/src/raw_head.h
//
// The header fields of a request head exactly as they came off the wire.
// cpp-httplib 0.11 percent-decodes every header value it parses (so
// "Bearer sk-ana-lap%74op" would read as "Bearer sk-ana-laptop") and its
// get_header_value() stops at a NUL byte; hearth-serve replaces the fields
// it parsed by these (guarded_server.h), and reads values with RawHeader()
// below, so that a header means what its bytes say.
//
// The head is checked as RFC 9112 section 5 asks a server to: every line
// ends in CRLF; a field name is a token directly followed by ":"; no line
// folding (obs-fold); a value holds no CR, LF, NUL or other control byte
// but HTAB. Leading and trailing spaces and tabs of a value are not part of
// it. Anything else is InvalidArgument (an HTTP 400), naming the line.
//
// Thread-safety: plain functions.
//
// Example:
//   absl::StatusOr<httplib::Headers> fields =
//       ParseRawHeaderFields("GET / HTTP/1.1\r\nAuthorization: Bearer k%74\r\n\r\n");
//   // (*fields).find("authorization")->second == "Bearer k%74"

#ifndef HEARTH_SERVE_RAW_HEAD_H_
#define HEARTH_SERVE_RAW_HEAD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "httplib.h"

namespace hearth::serve {

// ParseRawHeaderFields()
//
// The fields of `head`: a request line, field lines, then an empty line,
// each ending in CRLF (bytes after the empty line are ignored).
absl::StatusOr<httplib::Headers> ParseRawHeaderFields(absl::string_view head);

// Every value of the field `name` (case-insensitive), in order, whole
// (NUL bytes included).
std::vector<absl::string_view> RawHeaderValues(const httplib::Headers& headers,
                                               const std::string& name);

// The first value of `name`, whole; empty when absent.
std::string RawHeader(const httplib::Request& req, const std::string& name);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_RAW_HEAD_H_

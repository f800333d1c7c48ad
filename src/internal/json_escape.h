// File: src/internal/json_escape.h
//
// JSON string escaping for the hand-written JSON outputs (the timeline
// recorder's trace, the simulator's results.json). Not part of the public
// API.

#ifndef HEARTH_INTERNAL_JSON_ESCAPE_H_
#define HEARTH_INTERNAL_JSON_ESCAPE_H_

#include <string>
#include <string_view>

#include "absl/strings/str_format.h"

namespace hearth::internal {

// `s` escaped for use between JSON double quotes.
inline std::string JsonEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace hearth::internal

#endif  // HEARTH_INTERNAL_JSON_ESCAPE_H_

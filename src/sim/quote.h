// Values from input files echoed in error messages. A field can be megabytes
// long (a prompt, a mangled line); a message should stay readable, so long
// values are cut and their full length is given instead.

#ifndef HEARTH_SRC_SIM_QUOTE_H_
#define HEARTH_SRC_SIM_QUOTE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace hearth::internal {

inline constexpr size_t kMaxQuotedChars = 80;

// `v` itself, or its first `max` bytes then "... (N bytes)". The cut backs
// off to a UTF-8 character boundary so the message stays valid text.
inline std::string Clip(std::string_view v, size_t max = kMaxQuotedChars) {
  if (v.size() <= max) return std::string(v);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(v[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(std::string(v.substr(0, cut)), "... (", v.size(), " bytes)");
}

// "'value'", clipped as above.
inline std::string Quote(std::string_view v) {
  return absl::StrCat("'", Clip(v), "'");
}
// Abseil's string_view is its own type in this build; these overloads keep
// calls with it or with a std::string unambiguous.
inline std::string Quote(absl::string_view v) {
  return Quote(std::string_view(v.data(), v.size()));
}
inline std::string Quote(const std::string& v) { return Quote(std::string_view(v)); }
inline std::string Quote(const char* v) { return Quote(std::string_view(v)); }

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_QUOTE_H_

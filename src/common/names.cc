#include "hearth/common/names.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "internal/utf8.h"

namespace hearth {
namespace {

// A message quotes at most this much of a name, so a megabyte name cannot
// make a megabyte message.
constexpr size_t kMaxQuotedBytes = 64;

absl::Status Refused(std::string_view name, std::string_view field, std::string_view what) {
  const absl::string_view head(name.data(), std::min(name.size(), kMaxQuotedBytes));
  return absl::InvalidArgumentError(absl::StrCat(
      absl::string_view(field.data(), field.size()), " is \"", absl::CHexEscape(head),
      name.size() > kMaxQuotedBytes ? "\"... (" : "\" (", name.size(), " bytes); ",
      absl::string_view(what.data(), what.size()), "; a name is 1 to ", kMaxNameBytes,
      " bytes of UTF-8 without control characters"));
}

}  // namespace

absl::Status ValidateName(std::string_view name, std::string_view field) {
  if (name.empty()) return Refused(name, field, "it is empty");
  if (name.size() > kMaxNameBytes) {
    return Refused(name, field, absl::StrCat("it is longer than ", kMaxNameBytes, " bytes"));
  }
  for (size_t pos = 0; pos < name.size();) {
    const size_t at = pos;
    const int32_t cp = internal::NextCodePoint(name, &pos);
    if (cp < 0) return Refused(name, field, absl::StrCat("byte ", at, " is not valid UTF-8"));
    if (internal::IsControlCodePoint(cp)) {
      return Refused(name, field,
                     absl::StrFormat("byte %d is the control character U+%04X", at, cp));
    }
  }
  return absl::OkStatus();
}

}  // namespace hearth

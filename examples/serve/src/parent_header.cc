#include "parent_header.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace hearth::serve {

absl::StatusOr<RequestId> ParseParentHeader(absl::string_view text) {
  if (text.empty()) return RequestId();
  absl::string_view digits = text;
  if (!absl::ConsumePrefix(&digits, "chatcmpl-")) absl::ConsumePrefix(&digits, "cmpl-");
  uint64_t id = 0;
  if (!absl::SimpleAtoi(digits, &id) || !RequestId(id).valid()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "X-Hearth-Parent \"", text, "\" is not a request id (\"chatcmpl-<n>\" or \"<n>\")"));
  }
  return RequestId(id);
}

}  // namespace hearth::serve

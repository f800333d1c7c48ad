#include "response_request_id.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "random_hex.h"

namespace hearth::serve {

bool IsEchoableRequestId(absl::string_view value) {
  return !value.empty() && value.size() <= kMaxClientRequestIdBytes &&
         std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

std::string NewRequestId() { return absl::StrCat("req_", RandomHex(16)); }

std::string ResponseRequestId(const std::vector<absl::string_view>& sent) {
  if (sent.size() == 1 && IsEchoableRequestId(sent.front())) return std::string(sent.front());
  return NewRequestId();
}

}  // namespace hearth::serve

#include "request_credentials.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"

namespace hearth::serve {
namespace {

bool IsSpaceOrTab(char c) { return c == ' ' || c == '\t'; }

absl::string_view TrimOws(absl::string_view v) {
  while (!v.empty() && IsSpaceOrTab(v.front())) v.remove_prefix(1);
  while (!v.empty() && IsSpaceOrTab(v.back())) v.remove_suffix(1);
  return v;
}

// RFC 9110 tchar: the characters of a token, such as an auth-scheme.
bool IsTchar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

absl::Status Refused(absl::string_view why) {
  return absl::UnauthenticatedError(why);
}

// The key in one Authorization value.
absl::StatusOr<std::string> KeyOfAuthorization(absl::string_view value) {
  value = TrimOws(value);
  size_t scheme_end = 0;
  while (scheme_end < value.size() && IsTchar(value[scheme_end])) ++scheme_end;
  const absl::string_view scheme = value.substr(0, scheme_end);
  absl::string_view rest = value.substr(scheme_end);
  const size_t gap = rest.find_first_not_of(" \t");
  if (scheme.empty() || gap == 0 || gap == absl::string_view::npos) {
    return Refused(
        "the Authorization header is not \"Bearer <key>\"; send \"Authorization: Bearer <key>\" "
        "with a key from the household file");
  }
  rest.remove_prefix(gap);
  if (!IsToken68(rest)) {
    return Refused(
        "the Authorization header's credentials are not a token68 (letters, digits, -._~+/ "
        "and = padding); a key is sent as it is, never percent-encoded");
  }
  if (absl::EqualsIgnoreCase(scheme, "bearer")) return std::string(rest);
  if (absl::EqualsIgnoreCase(scheme, "basic")) {
    std::string pair;
    if (!absl::Base64Unescape(rest, &pair)) {
      return Refused("the Authorization: Basic credentials are not base64");
    }
    const size_t colon = pair.find(':');
    if (colon == std::string::npos || !IsToken68(absl::string_view(pair).substr(colon + 1))) {
      return Refused(
          "the Authorization: Basic credentials are not \"<name>:<key>\" with a key from the "
          "household file as the password");
    }
    return pair.substr(colon + 1);
  }
  return Refused("the Authorization scheme is not supported; use Bearer (or Basic, the key as "
                 "the password)");
}

}  // namespace

bool IsToken68(absl::string_view text) {
  size_t i = 0;
  while (i < text.size() && (absl::ascii_isalnum(static_cast<unsigned char>(text[i])) ||
                             absl::string_view("-._~+/").find(text[i]) != absl::string_view::npos)) {
    ++i;
  }
  if (i == 0) return false;
  while (i < text.size() && text[i] == '=') ++i;
  return i == text.size();
}

absl::StatusOr<std::string> PresentedKey(const std::vector<absl::string_view>& authorization,
                                         const std::vector<absl::string_view>& api_key) {
  if (authorization.size() > 1) return Refused("more than one Authorization header");
  if (api_key.size() > 1) return Refused("more than one X-Api-Key header");
  std::string key;
  if (!authorization.empty()) {
    absl::StatusOr<std::string> k = KeyOfAuthorization(authorization[0]);
    if (!k.ok()) return k.status();
    key = *std::move(k);
  }
  if (!api_key.empty()) {
    const absl::string_view k = TrimOws(api_key[0]);
    if (!IsToken68(k)) {
      return Refused("the X-Api-Key header is not a token68 (letters, digits, -._~+/ and = "
                     "padding); a key is sent as it is, never percent-encoded");
    }
    if (!key.empty() && key != k) {
      return Refused("the Authorization and X-Api-Key headers carry different keys");
    }
    key = std::string(k);
  }
  return key;
}

}  // namespace hearth::serve

#include "cors_policy.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace hearth::serve {
namespace {

// What the server reads from a request (the key, the class, the parent,
// the tracing id) besides the CORS-safelisted headers.
constexpr char kAllowedHeaders[] =
    "Authorization, Content-Type, X-Api-Key, X-Hearth-Class, X-Hearth-Parent, X-Request-Id";
constexpr char kAllowedMethods[] = "GET, POST, OPTIONS";
constexpr char kExposedHeaders[] =
    "X-Request-Id, X-Hearth-Request-Id, Retry-After, x-should-retry";
// Ten minutes: long enough to spare a page most preflights, short enough
// that a changed list is seen soon (browsers cap it at 2 h or 24 h).
constexpr char kMaxAgeSeconds[] = "600";

// Longer than any real origin; a longer value is no origin.
constexpr size_t kMaxOriginBytes = 512;

bool IsSchemeChar(char c) {
  return absl::ascii_isalnum(c) || c == '+' || c == '-' || c == '.';
}

bool IsHost(absl::string_view host) {
  if (host.empty()) return false;
  if (host.front() == '[') {
    return host.size() > 2 && host.back() == ']' &&
           std::all_of(host.begin() + 1, host.end() - 1,
                       [](char c) { return absl::ascii_isxdigit(c) || c == ':' || c == '.'; });
  }
  return std::all_of(host.begin(), host.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '-' || c == '.'; });
}

bool IsPort(absl::string_view port) {
  uint32_t n = 0;
  return !port.empty() && port.size() <= 5 &&
         std::all_of(port.begin(), port.end(), [](char c) { return absl::ascii_isdigit(c); }) &&
         absl::SimpleAtoi(port, &n) && n >= 1 && n <= 65535;
}

}  // namespace

bool IsOriginSyntax(absl::string_view origin) {
  if (origin.size() > kMaxOriginBytes) return false;
  const size_t sep = origin.find("://");
  if (sep == absl::string_view::npos || sep == 0 || !absl::ascii_isalpha(origin[0])) return false;
  const absl::string_view scheme = origin.substr(0, sep);
  if (!std::all_of(scheme.begin(), scheme.end(), IsSchemeChar)) return false;
  absl::string_view rest = origin.substr(sep + 3);
  // The port follows the last ':' outside an IPv6 literal's brackets.
  const size_t close = rest.rfind(']');
  const size_t colon = rest.rfind(':');
  if (colon != absl::string_view::npos && (close == absl::string_view::npos || colon > close)) {
    if (!IsPort(rest.substr(colon + 1))) return false;
    rest = rest.substr(0, colon);
  }
  return IsHost(rest);
}

absl::StatusOr<CorsPolicy> CorsPolicy::Parse(absl::string_view list, bool keys_required) {
  CorsPolicy out;
  for (absl::string_view entry : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry == "*") {
      if (keys_required) {
        return absl::InvalidArgumentError(
            "--cors_origins \"*\" is allowed only without --household: with keys, list the "
            "pages' origins");
      }
      out.any_ = true;
      continue;
    }
    const std::string origin = absl::AsciiStrToLower(entry);
    if (origin == "null" || !IsOriginSyntax(origin)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--cors_origins: \"", entry.substr(0, 100),
          "\" is not an origin (scheme://host[:port], no path, e.g. https://chat.home.arpa)"));
    }
    if (std::find(out.origins_.begin(), out.origins_.end(), origin) == out.origins_.end()) {
      out.origins_.push_back(origin);
    }
  }
  return out;
}

std::optional<std::string> CorsPolicy::AllowedOrigin(
    const std::vector<absl::string_view>& origin) const {
  if (origin.size() != 1) return std::nullopt;
  const absl::string_view o = origin.front();
  if (any_ && IsOriginSyntax(o)) return std::string(o);
  if (std::find(origins_.begin(), origins_.end(), o) != origins_.end()) return std::string(o);
  return std::nullopt;
}

CorsPolicy::Headers CorsPolicy::ResponseHeaders(
    const std::vector<absl::string_view>& origin) const {
  Headers out;
  if (!enabled()) return out;
  out.emplace_back("Vary", "Origin");
  if (std::optional<std::string> allowed = AllowedOrigin(origin)) {
    out.emplace_back("Access-Control-Allow-Origin", *allowed);
    out.emplace_back("Access-Control-Expose-Headers", kExposedHeaders);
  }
  return out;
}

CorsPolicy::Headers CorsPolicy::PreflightHeaders(
    const std::vector<absl::string_view>& origin) const {
  Headers out;
  if (!AllowedOrigin(origin)) return out;
  out.emplace_back("Access-Control-Allow-Methods", kAllowedMethods);
  out.emplace_back("Access-Control-Allow-Headers", kAllowedHeaders);
  out.emplace_back("Access-Control-Max-Age", kMaxAgeSeconds);
  return out;
}

}  // namespace hearth::serve

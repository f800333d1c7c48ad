// File: examples/serve/src/cors_policy.h
//
// `CorsPolicy`: which web pages' scripts may call hearth-serve from a
// browser (CORS), from --cors_origins: a comma-separated list of origins
// ("https://chat.home.arpa,http://127.0.0.1:3000"); empty, the default,
// gives no CORS header at all (a browser then lets no other page's script
// read an answer). An origin is scheme://host[:port] exactly as a browser
// sends it (no path, no trailing slash; scheme and host are lowercased
// here). "*" allows every origin, and only without keys (no --household):
// a key-holding household names its pages, since any page a member opens
// could otherwise use a key that page learns.
//
// A request whose one Origin header names an allowed origin gets it echoed
// in Access-Control-Allow-Origin (never "*"), with the response headers a
// script may read (X-Request-Id, X-Hearth-Request-Id, Retry-After, ...);
// every response gets "Vary: Origin" once CORS is on, so that no cache
// gives one origin's answer to another. A preflight (OPTIONS) for an
// allowed origin also gets the methods, request headers and max age.
// An Origin that is not listed, malformed, or sent twice gets no CORS
// header. No credentials (cookies) are ever allowed: keys travel in
// Authorization, which a script sets itself.
//
// Thread-safety: immutable after Parse; any thread.
//
// Example:
//   absl::StatusOr<CorsPolicy> cors = CorsPolicy::Parse("https://a.example", true);
//   for (auto& [name, value] : cors->ResponseHeaders(origins)) res.set_header(name, value);

#ifndef HEARTH_SERVE_CORS_POLICY_H_
#define HEARTH_SERVE_CORS_POLICY_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hearth::serve {

class CorsPolicy {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // No CORS.
  CorsPolicy() = default;

  // CorsPolicy::Parse()
  //
  // `list`: --cors_origins. InvalidArgument naming the entry for one that
  // is not scheme://host[:port] (or "null", which sandboxed pages share),
  // and for "*" when `keys_required`.
  static absl::StatusOr<CorsPolicy> Parse(absl::string_view list, bool keys_required);

  bool enabled() const { return any_ || !origins_.empty(); }

  // The origin to echo for a request's raw Origin values; nullopt: none.
  std::optional<std::string> AllowedOrigin(const std::vector<absl::string_view>& origin) const;

  // The CORS headers of any answer to a request with these Origin values.
  Headers ResponseHeaders(const std::vector<absl::string_view>& origin) const;
  // The headers a preflight's answer adds to ResponseHeaders.
  Headers PreflightHeaders(const std::vector<absl::string_view>& origin) const;

 private:
  bool any_ = false;
  std::vector<std::string> origins_;
};

// Whether `origin` is scheme://host[:port] (RFC 6454's serialisation).
bool IsOriginSyntax(absl::string_view origin);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_CORS_POLICY_H_

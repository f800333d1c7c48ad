#include "request_gate.h"

#include <string>
#include <vector>

#include "raw_head.h"
#include "request_credentials.h"

namespace hearth::serve {

absl::StatusOr<Caller> CallerOf(const HouseholdDirectory& directory, const httplib::Request& req) {
  absl::StatusOr<std::string> key = PresentedKey(RawHeaderValues(req.headers, "Authorization"),
                                                 RawHeaderValues(req.headers, "X-Api-Key"));
  if (!key.ok() && directory.keys_required()) return key.status();
  return directory.AuthenticateKey(key.ok() ? *key : "");
}

namespace {

// A preflight carries no body; one that says it does is something else.
bool IsPreflight(const httplib::Request& req) {
  if (req.method != "OPTIONS" || req.headers.count("Transfer-Encoding") > 0) return false;
  std::vector<absl::string_view> lengths = RawHeaderValues(req.headers, "Content-Length");
  return lengths.empty() || (lengths.size() == 1 && lengths.front() == "0");
}

}  // namespace

GuardedServer::Gate KeyGate(const HouseholdDirectory& directory, bool preflights) {
  return [&directory, preflights](const httplib::Request& req) -> std::optional<HttpError> {
    // Health probes come from supervisors and proxies that hold no key.
    if (req.path == "/healthz" || req.path == "/health") return std::nullopt;
    if (preflights && IsPreflight(req)) return std::nullopt;
    absl::StatusOr<Caller> caller = CallerOf(directory, req);
    if (caller.ok()) return std::nullopt;
    HttpError e = ErrorFor(caller.status());
    // The dashboard and the status it fetches: a browser asks for a name
    // and the key as the password (Basic), and sends them with every later
    // request of the page.
    if (req.path == "/" || req.path == "/v1/hearth/status") {
      e.headers.emplace_back("WWW-Authenticate", "Basic realm=\"hearth-serve\", charset=\"UTF-8\"");
    }
    return e;
  };
}

// Without keys every connection counts as a member's: there is nobody to
// tell apart, so nobody is shed for being a stranger.
GuardedServer::KeyCheck ValidKeyCheck(const HouseholdDirectory& directory) {
  return [&directory](const httplib::Request& req) { return CallerOf(directory, req).ok(); };
}

}  // namespace hearth::serve

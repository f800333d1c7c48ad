// File: examples/serve/src/cors_routes.h
//
// Puts a CorsPolicy (cors_policy.h) on a GuardedServer: every response
// httplib writes (early refusals and its own errors included, so that a
// page's script can read a 401 or a 429) carries the policy's headers for
// the request's Origin, and OPTIONS on any path is a preflight answered
// 204 with no key needed (the gate lets it through: request_gate.h, with
// `preflights`). A server without CORS gets nothing installed.
//
// Thread-safety: install before listening; `cors` must outlive the server.

#ifndef HEARTH_SERVE_CORS_ROUTES_H_
#define HEARTH_SERVE_CORS_ROUTES_H_

#include "cors_policy.h"
#include "guarded_server.h"

namespace hearth::serve {

void InstallCors(GuardedServer& server, const CorsPolicy& cors);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_CORS_ROUTES_H_

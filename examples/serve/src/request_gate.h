// File: examples/serve/src/request_gate.h
//
// The key check every route but GET /healthz and /health (and CORS
// preflights, when CORS is on) makes from a
// request's head, before its body is read (guarded_server.h runs it): a
// request without a valid key is answered 401 there, whatever its path, so
// a stranger learns nothing about the routes or their limits and sends no
// body for the server to read. A 401 for the dashboard ("/") offers Basic
// authentication, so that a browser asks for a name and the key as the
// password; API paths offer Bearer. When the household needs no keys (no
// --household file) the gate lets everything through.
//
// What each key may then do is the routes' business (403s:
// household_directory.h for classes, page_views.h for pages).
//
// Thread-safety: the functions returned read only the directory, which is
// immutable; call them from any thread.

#ifndef HEARTH_SERVE_REQUEST_GATE_H_
#define HEARTH_SERVE_REQUEST_GATE_H_

#include "absl/status/statusor.h"
#include "guarded_server.h"
#include "household_directory.h"
#include "httplib.h"

namespace hearth::serve {

// The caller behind a request's raw Authorization and X-Api-Key fields
// (every value of each: two of either are refused).
absl::StatusOr<Caller> CallerOf(const HouseholdDirectory& directory, const httplib::Request& req);

// `directory` must outlive the functions. With `preflights`, a CORS
// preflight (OPTIONS, no body) needs no key either: a browser sends none
// with it. Its connection still shows no key, so it counts and is shed as
// a stranger's (connection_guard.h), and an OPTIONS with a body needs a key.
GuardedServer::Gate KeyGate(const HouseholdDirectory& directory, bool preflights = false);
GuardedServer::KeyCheck ValidKeyCheck(const HouseholdDirectory& directory);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_REQUEST_GATE_H_

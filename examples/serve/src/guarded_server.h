// File: examples/serve/src/guarded_server.h
//
// `GuardedServer` is cpp-httplib's Server (0.11, Debian 12's
// libcpp-httplib-dev) with hearth-serve's connection handling in place of
// its own; routing, handlers, content providers and response writing stay
// httplib's. httplib offers the hooks this is built on: a task queue per
// accepted socket (new_task_queue), a virtual per-connection entry point
// (process_and_close_socket), a Stream interface, a setup callback between
// a request's head and its routing, a pre-routing handler that runs before
// any body byte is read, and an Expect: 100-continue handler. It lacks
// what is added here: read deadlines over a whole head and a whole body
// (its timeouts are per read, so a byte a second never trips them), a cap
// per client, a way to shed one connection for another, raw header values
// (it percent-decodes them), and a body-length policy before the body.
//
// Each accepted socket, on its own HTTP thread:
//   1. ConnectionGuard::Admit: registered, or refused with a 503 when every
//      connection at a cap is serving a member (connection_guard.h);
//   2. for each request: the head under the head deadline (guarded_stream.h);
//      its header fields replaced by their raw bytes (raw_head.h);
//   3. before any body byte: a malformed head is 400; then the gate (the
//      routes' key check: 401, 403); then the body's framing: a
//      Transfer-Encoding (chunked uploads are refused) or a POST, PUT or
//      PATCH without Content-Length is 411, a bad Content-Length 400, one
//      over the payload limit 413. A request answered here, before its body
//      was read, closes its connection (after a lingering close);
//   4. the body under the body deadline, then the handler.
// A request whose key authenticates marks its connection a member's
// (never shed while it is served); the connection is a stranger again when
// a later request on it shows no valid key.
//
// The HTTP thread pool holds max_connections threads plus a few for
// connections being refused or shed, so that admission runs at once.
//
// Thread-safety: as httplib::Server; configure before listening.

#ifndef HEARTH_SERVE_GUARDED_SERVER_H_
#define HEARTH_SERVE_GUARDED_SERVER_H_

#include <functional>
#include <optional>

#include "connection_guard.h"
#include "httplib.h"
#include "openai_response.h"

namespace hearth::serve {

class GuardedServer : public httplib::Server {
 public:
  // Checks a request from its head alone; an error is answered at once.
  using Gate = std::function<std::optional<HttpError>(const httplib::Request&)>;
  // Whether a request's head carries a valid key (it marks the connection
  // a member's).
  using KeyCheck = std::function<bool(const httplib::Request&)>;
  // Adds headers to every response httplib writes, early answers and its
  // own errors included (CORS: cors_routes.h).
  using ResponseHeaders = std::function<void(const httplib::Request&, httplib::Response&)>;

  // `payload_max_bytes`: the largest body accepted (413 above).
  GuardedServer(ConnectionLimits limits, size_t payload_max_bytes);

  void set_gate(Gate gate) { gate_ = std::move(gate); }
  void set_key_check(KeyCheck check) { key_check_ = std::move(check); }
  void set_response_headers(ResponseHeaders add) { response_headers_ = std::move(add); }

  ConnectionGuard& guard() { return guard_; }
  const ConnectionGuard& guard() const { return guard_; }

 private:
  bool process_and_close_socket(socket_t sock) override;
  // Step 2's replacement of the parsed fields, and the body deadline.
  // Returns whether the request carries a member's key.
  bool SetUpRequest(httplib::Request& req, class GuardedStream& stream, Connection* c);
  // Step 3: the answer to give before the body, if any.
  std::optional<HttpError> CheckHead(const httplib::Request& req, Connection* c) const;
  // Fills `res` with an answer given before the body.
  void AnswerEarly(const httplib::Request& req, httplib::Response& res, Connection* c,
                   const HttpError& error) const;

  ConnectionGuard guard_;
  const size_t payload_max_bytes_;
  Gate gate_;
  KeyCheck key_check_;
  ResponseHeaders response_headers_;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_GUARDED_SERVER_H_

// File: examples/serve/src/connection_guard.h
//
// `ConnectionGuard` keeps the register of hearth-serve's open HTTP
// connections and decides who may have one. Each connection holds one HTTP
// thread for as long as it is open (cpp-httplib's model), so whoever holds
// the threads decides who is served: the guard keeps members' connections
// from being crowded out by connections that never showed a key.
//
//   - At most `max_connections` are served at once, and at most
//     `max_per_client` from one client address.
//   - A new connection that finds a cap full makes room by shedding one
//     that is not serving a member: first the one that has gone longest
//     without presenting a valid key (a slow or idle stranger), then the
//     longest-idle keep-alive connection of a member between requests. A
//     connection serving a member's request is never shed; when every
//     connection at the cap is one, the newcomer is refused (503).
//   - Shedding shuts the socket down from the shedding thread; the shed
//     connection's own thread sees its read fail, and ends.
//
// Every accepted socket also gets TCP keep-alive probes, so that a peer
// that vanished without a FIN (a laptop closed mid-answer) shows as gone in
// PeerGone() within about keepalive_idle + keepalive_interval * count.
//
// Thread-safety: every method from any thread; each Connection is used by
// the one thread that admitted it (the guard only reads its trust state
// and shuts its socket down).

#ifndef HEARTH_SERVE_CONNECTION_GUARD_H_
#define HEARTH_SERVE_CONNECTION_GUARD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "openai_response.h"

namespace hearth::serve {

struct ConnectionLimits {
  // Connections served at once (each holds an HTTP thread), and from one
  // client address.
  int32_t max_connections = 256;
  int32_t max_per_client = 64;
  // From a request's start (its connection's accept, or its first byte on
  // a kept-alive connection) until its head has arrived whole; then from
  // the head's end until the body has arrived whole. Past either, 408.
  absl::Duration header_timeout = absl::Seconds(10);
  absl::Duration body_timeout = absl::Seconds(30);
  // A kept-alive connection's wait for its next request.
  absl::Duration idle_timeout = absl::Seconds(5);
  // Longest wait for one read or write to make progress.
  absl::Duration io_timeout = absl::Seconds(10);
  // Largest request head (request line and header fields); larger: 431.
  size_t max_head_bytes = 64 << 10;
  // TCP keep-alive probes on every accepted socket.
  int32_t keepalive_idle_s = 10;
  int32_t keepalive_interval_s = 5;
  int32_t keepalive_count = 3;
};

// How much a connection is worth keeping, lowest first: the order in which
// connections are shed.
enum class ConnectionTrust {
  // No valid key yet on this connection (or its last request had none).
  kStranger,
  // A member's connection between two requests.
  kIdleMember,
  // Serving a member's request (never shed).
  kServingMember,
};

struct ConnectionStats {
  int32_t open = 0;
  int32_t strangers = 0;
  uint64_t admitted = 0;
  uint64_t refused = 0;
  uint64_t shed = 0;
  uint64_t head_timeouts = 0;
  uint64_t body_timeouts = 0;
};

class ConnectionGuard;

// One admitted connection. Owned by the guard; used by its own thread.
class Connection {
 public:
  int fd() const { return fd_; }
  const std::string& peer() const { return peer_; }
  // Whether the client closed its end or the connection broke (a FIN, a
  // reset, keep-alive probes unanswered). Does not wait or read.
  bool PeerGone() const;

  // Set by the thread serving it: the current request was answered before
  // its body was read, so the connection must close after the answer.
  bool must_close = false;
  // The current request's head could not be parsed (raw_head.h).
  std::optional<HttpError> head_error;

 private:
  friend class ConnectionGuard;
  Connection(int fd, std::string peer, absl::Time now)
      : fd_(fd), peer_(std::move(peer)), since_(now) {}

  const int fd_;
  const std::string peer_;
  // Guarded by the guard's mutex.
  ConnectionTrust trust_ = ConnectionTrust::kStranger;
  absl::Time since_;
  bool shed_ = false;
  std::thread::id thread_;
};

class ConnectionGuard {
 public:
  explicit ConnectionGuard(ConnectionLimits limits) : limits_(limits) {}
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  // ConnectionGuard::Admit()
  //
  // On the thread that will serve socket `fd`, before reading from it:
  // registers it (shedding another connection when a cap is full) and sets
  // its TCP keep-alive. nullptr: refused; the caller answers 503 and closes.
  Connection* Admit(int fd) ABSL_LOCKS_EXCLUDED(mu_);
  // Before the socket is closed. Invalidates `c`.
  void Release(Connection* c) ABSL_LOCKS_EXCLUDED(mu_);
  // The connection the calling thread is serving; nullptr outside one.
  Connection* Current() const ABSL_LOCKS_EXCLUDED(mu_);
  void SetTrust(Connection* c, ConnectionTrust trust) ABSL_LOCKS_EXCLUDED(mu_);
  // Sheds every connection not serving a member's request (the server is
  // stopping: their threads would otherwise wait out a head or keep-alive
  // deadline before the HTTP pool can join them).
  void ShedIdle() ABSL_LOCKS_EXCLUDED(mu_);
  void CountTimeout(bool head) ABSL_LOCKS_EXCLUDED(mu_);

  ConnectionStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);
  const ConnectionLimits& limits() const { return limits_; }

 private:
  // The connection to shed to make room (from `peer` only, unless empty);
  // nullptr when every candidate serves a member.
  Connection* Victim(const std::string* peer) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Shed(Connection* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetKeepAlive(int fd) const;

  const ConnectionLimits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Connection*, std::unique_ptr<Connection>> open_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::thread::id, Connection*> by_thread_ ABSL_GUARDED_BY(mu_);
  // Connections not shed, in all and per client address.
  int32_t live_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, int32_t> live_per_peer_ ABSL_GUARDED_BY(mu_);
  ConnectionStats stats_ ABSL_GUARDED_BY(mu_);
};

// The client address of socket `fd` ("" when it has none), numeric.
std::string PeerAddress(int fd);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_CONNECTION_GUARD_H_

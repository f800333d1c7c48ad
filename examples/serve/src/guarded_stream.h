// File: examples/serve/src/guarded_stream.h
//
// `GuardedStream` is the httplib::Stream hearth-serve's connections are
// read and written through (guarded_server.h), in place of httplib's own
// socket stream. On top of reads and writes with a per-operation timeout it
//   - holds each request to deadlines: its head must arrive whole by the
//     head deadline, its body by the body deadline; past one it answers 408
//     itself and fails every later read and write, so a client sending a
//     byte a second is cut off rather than holding its thread;
//   - keeps a copy of the request head's bytes as they arrived (for
//     raw_head.h), and answers 431 to a head over the size limit;
//   - waits for the next request on a kept-alive connection with one poll
//     (httplib's own wait wakes every 10 ms).
//
// Thread-safety: one thread (the connection's).

#ifndef HEARTH_SERVE_GUARDED_STREAM_H_
#define HEARTH_SERVE_GUARDED_STREAM_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "connection_guard.h"
#include "httplib.h"
#include "openai_response.h"

namespace hearth::serve {

class GuardedStream : public httplib::Stream {
 public:
  // `guard` counts the timeouts; `limits` give the timeouts and sizes.
  GuardedStream(int fd, ConnectionGuard* guard);

  // Waits until the next request's first byte (or the end of the stream)
  // can be read, at most until `until`. False: nothing came.
  bool WaitForRequest(absl::Time until);
  // A request starts: its head must be whole by `deadline`.
  void BeginHead(absl::Time deadline);
  // Its head has been parsed: the body must be whole by `deadline`.
  void BeginBody(absl::Time deadline);
  // The head's bytes so far (whole once httplib has parsed it).
  absl::string_view head() const { return head_; }
  // Whether a deadline or the head limit ended the stream (its answer was
  // sent).
  bool failed() const { return failed_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

 private:
  enum class Phase { kHead, kBody };
  // Hands buffered bytes to httplib, recording the head's.
  ssize_t Take(char* ptr, size_t size);
  void Fail(int status, absl::string_view message, absl::string_view code);

  const int fd_;
  ConnectionGuard* const guard_;
  const absl::Duration io_timeout_;
  const size_t max_head_bytes_;
  Phase phase_ = Phase::kHead;
  absl::Time deadline_ = absl::InfiniteFuture();
  std::string head_;
  bool head_done_ = false;
  bool failed_ = false;
  std::vector<char> buffer_;
  size_t buffer_begin_ = 0;
  size_t buffer_end_ = 0;
};

// Writes `error` as a whole HTTP/1.1 response with "Connection: close"
// straight to socket `fd` (for answers given outside httplib's request
// handling: a refused connection, a timed-out head), with a fresh
// X-Request-Id (response_request_id.h). Best effort.
void WriteWholeResponse(int fd, const HttpError& error);

// Closes socket `fd` after an answer that left input unread: stops
// sending, then discards what the client still sends (at most `max_bytes`,
// or until `max_wait`), so that the client reads the answer instead of a
// connection reset, then closes.
void CloseLingering(int fd, size_t max_bytes, absl::Duration max_wait);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_GUARDED_STREAM_H_

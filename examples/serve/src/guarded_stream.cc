#include "guarded_stream.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "response_request_id.h"

namespace hearth::serve {
namespace {

constexpr size_t kReadBufferBytes = 16 << 10;

// poll() on `fd` for `events`, at most `timeout` (rounded up to a
// millisecond); > 0 ready, 0 timed out, < 0 failed.
int PollFor(int fd, short events, absl::Duration timeout) {
  const int64_t ms = std::min<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(
                                           std::max(timeout, absl::ZeroDuration()),
                                           absl::Milliseconds(1))),
                                       int64_t{1} << 30);
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, static_cast<int>(ms));
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

void IpAndPort(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
  char host[NI_MAXHOST] = {};
  char serv[NI_MAXSERV] = {};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof(host), serv,
                  sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = atoi(serv);
  }
}

const char* Reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

}  // namespace

GuardedStream::GuardedStream(int fd, ConnectionGuard* guard)
    : fd_(fd),
      guard_(guard),
      io_timeout_(guard->limits().io_timeout),
      max_head_bytes_(guard->limits().max_head_bytes),
      buffer_(kReadBufferBytes) {}

bool GuardedStream::WaitForRequest(absl::Time until) {
  if (failed_) return false;
  if (buffer_begin_ < buffer_end_) return true;
  return PollFor(fd_, POLLIN, until - absl::Now()) > 0;
}

void GuardedStream::BeginHead(absl::Time deadline) {
  phase_ = Phase::kHead;
  deadline_ = deadline;
  head_.clear();
  head_done_ = false;
}

void GuardedStream::BeginBody(absl::Time deadline) {
  phase_ = Phase::kBody;
  deadline_ = deadline;
}

void GuardedStream::Fail(int status, absl::string_view message, absl::string_view code) {
  failed_ = true;
  WriteWholeResponse(fd_, HttpErrorOf(status, message, code));
}

ssize_t GuardedStream::Take(char* ptr, size_t size) {
  const size_t n = std::min(size, buffer_end_ - buffer_begin_);
  const char* from = buffer_.data() + buffer_begin_;
  if (phase_ == Phase::kHead && !head_done_) {
    for (size_t i = 0; i < n && !head_done_; ++i) {
      head_.push_back(from[i]);
      // The head ends at an empty line: "\r\n" right after a line's "\n".
      const size_t s = head_.size();
      head_done_ = s >= 2 && head_[s - 1] == '\n' && head_[s - 2] == '\r' &&
                   (s == 2 || head_[s - 3] == '\n');
    }
    if (head_.size() > max_head_bytes_) {
      Fail(431, absl::StrCat("the request head is larger than ", max_head_bytes_, " bytes"),
           "request_header_fields_too_large");
      return -1;
    }
  }
  std::memcpy(ptr, from, n);
  buffer_begin_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t GuardedStream::read(char* ptr, size_t size) {
  if (failed_) return -1;
  if (size == 0) return 0;
  if (buffer_begin_ < buffer_end_) return Take(ptr, size);
  const absl::Duration left = deadline_ - absl::Now();
  const bool deadline_first = left <= io_timeout_;
  const int ready = left <= absl::ZeroDuration() ? 0 : PollFor(fd_, POLLIN, std::min(left, io_timeout_));
  if (ready < 0) return -1;
  if (ready == 0) {
    // A request that sent nothing yet just ends (a speculative browser
    // connection, say); one caught half-way is told why.
    if (deadline_first && !(phase_ == Phase::kHead && head_.empty())) {
      guard_->CountTimeout(phase_ == Phase::kHead);
      Fail(408,
           phase_ == Phase::kHead
               ? absl::StrCat("the request head did not arrive within ",
                              absl::FormatDuration(guard_->limits().header_timeout))
               : absl::StrCat("the request body did not arrive within ",
                              absl::FormatDuration(guard_->limits().body_timeout)),
           "request_timeout");
    }
    return -1;
  }
  ssize_t n;
  do {
    n = recv(fd_, buffer_.data(), buffer_.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return n;
  buffer_begin_ = 0;
  buffer_end_ = static_cast<size_t>(n);
  return Take(ptr, size);
}

ssize_t GuardedStream::write(const char* ptr, size_t size) {
  if (failed_) return -1;
  if (PollFor(fd_, POLLOUT, io_timeout_) <= 0) return -1;
  ssize_t n;
  do {
    n = send(fd_, ptr, size, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

bool GuardedStream::is_readable() const {
  if (buffer_begin_ < buffer_end_) return true;
  return PollFor(fd_, POLLIN, std::min(io_timeout_, deadline_ - absl::Now())) > 0;
}

bool GuardedStream::is_writable() const { return PollFor(fd_, POLLOUT, io_timeout_) > 0; }

void GuardedStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) IpAndPort(addr, len, ip, port);
}

void GuardedStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) IpAndPort(addr, len, ip, port);
}

void WriteWholeResponse(int fd, const HttpError& error) {
  const std::string body = Dump(error.body);
  std::string out = absl::StrCat("HTTP/1.1 ", error.status, " ", Reason(error.status),
                                 "\r\nContent-Type: application/json\r\nContent-Length: ",
                                 body.size(), "\r\nConnection: close\r\n",
                                 // The head, if any, was not read whole:
                                 // nothing of it is repeated.
                                 kRequestIdHeader, ": ", NewRequestId(), "\r\n");
  for (const auto& [name, value] : ErrorHeaders(error)) absl::StrAppend(&out, name, ": ", value, "\r\n");
  absl::StrAppend(&out, "\r\n", body);
  size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

void CloseLingering(int fd, size_t max_bytes, absl::Duration max_wait) {
  shutdown(fd, SHUT_WR);
  const absl::Time until = absl::Now() + max_wait;
  char sink[16 << 10];
  size_t drained = 0;
  while (drained < max_bytes && PollFor(fd, POLLIN, until - absl::Now()) > 0) {
    const ssize_t n = recv(fd, sink, sizeof(sink), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
  close(fd);
}

}  // namespace hearth::serve

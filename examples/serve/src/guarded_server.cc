#include "guarded_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "guarded_stream.h"
#include "ollama_response.h"
#include "raw_head.h"
#include "response_request_id.h"

namespace hearth::serve {
namespace {

// What a client may still send after an answer given before its body: read
// and dropped, so that it sees the answer rather than a reset.
constexpr size_t kLingerBytes = 8 << 20;
constexpr absl::Duration kLingerWait = absl::Seconds(2);

// The fields httplib adds itself, from the socket; a client's own copies
// are dropped.
constexpr const char* kSocketFields[] = {"REMOTE_ADDR", "REMOTE_PORT", "LOCAL_ADDR", "LOCAL_PORT"};

bool BodyPending(const httplib::Request& req) {
  if (req.headers.count("Transfer-Encoding") > 0) return true;
  auto it = req.headers.find("Content-Length");
  return it != req.headers.end() && it->second != "0";
}

HttpError LengthRequired(absl::string_view why) {
  return HttpErrorOf(411, why, "length_required");
}

}  // namespace

GuardedServer::GuardedServer(ConnectionLimits limits, size_t payload_max_bytes)
    : guard_(limits), payload_max_bytes_(payload_max_bytes) {
  const size_t threads = static_cast<size_t>(std::max(1, limits.max_connections)) +
                         static_cast<size_t>(std::max(16, limits.max_connections / 4));
  new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  set_payload_max_length(payload_max_bytes);
  set_keep_alive_timeout(std::max<time_t>(1, absl::ToInt64Seconds(limits.idle_timeout)));
  set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    Connection* c = guard_.Current();
    if (c == nullptr) return HandlerResponse::Unhandled;
    std::optional<HttpError> early = CheckHead(req, c);
    if (!early) return HandlerResponse::Unhandled;
    AnswerEarly(req, res, c, *early);
    return HandlerResponse::Handled;
  });
  // Runs before "100 Continue" would invite the body: a refusal goes
  // instead, and the body is never sent.
  set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
    Connection* c = guard_.Current();
    std::optional<HttpError> early = c == nullptr ? std::nullopt : CheckHead(req, c);
    if (!early) return 100;
    AnswerEarly(req, res, c, *early);
    return early->status;
  });
  // httplib runs this on every response it writes, the early answers and
  // its own errors included.
  set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    res.headers.erase(kRequestIdHeader);
    res.set_header(kRequestIdHeader,
                   ResponseRequestId(RawHeaderValues(req.headers, kRequestIdHeader)));
    if (response_headers_) response_headers_(req, res);
    Connection* c = guard_.Current();
    if (c == nullptr || !c->must_close) return;
    res.headers.erase("Keep-Alive");
    res.headers.erase("Connection");
    res.set_header("Connection", "close");
  });
}

bool GuardedServer::SetUpRequest(httplib::Request& req, GuardedStream& stream, Connection* c) {
  c->must_close = false;
  c->head_error.reset();
  absl::StatusOr<httplib::Headers> raw = ParseRawHeaderFields(stream.head());
  if (!raw.ok()) {
    c->head_error = ErrorFor(raw.status());
  } else {
    for (const char* field : kSocketFields) raw->erase(field);
    raw->emplace("REMOTE_ADDR", req.remote_addr);
    raw->emplace("REMOTE_PORT", std::to_string(req.remote_port));
    raw->emplace("LOCAL_ADDR", req.local_addr);
    raw->emplace("LOCAL_PORT", std::to_string(req.local_port));
    req.headers = *std::move(raw);
  }
  const bool member = !c->head_error && key_check_ && key_check_(req);
  guard_.SetTrust(c, member ? ConnectionTrust::kServingMember : ConnectionTrust::kStranger);
  stream.BeginBody(absl::Now() + guard_.limits().body_timeout);
  return member;
}

std::optional<HttpError> GuardedServer::CheckHead(const httplib::Request& req,
                                                  Connection* c) const {
  if (c->head_error) return c->head_error;
  if (gate_) {
    if (std::optional<HttpError> refused = gate_(req)) return refused;
  }
  if (req.headers.count("Transfer-Encoding") > 0) {
    return LengthRequired(
        "chunked (Transfer-Encoding) request bodies are not accepted; send the body with a "
        "Content-Length");
  }
  std::vector<absl::string_view> lengths = RawHeaderValues(req.headers, "Content-Length");
  if (lengths.empty()) {
    if (req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
      return LengthRequired(absl::StrCat("a ", req.method, " needs a Content-Length header"));
    }
    return std::nullopt;
  }
  uint64_t length = 0;
  for (absl::string_view v : lengths) {
    uint64_t n = 0;
    const bool digits = !v.empty() && v.size() <= 18 &&
                        std::all_of(v.begin(), v.end(), [](char ch) { return absl::ascii_isdigit(ch); });
    if (!digits || !absl::SimpleAtoi(v, &n) || (v != lengths.front())) {
      return ErrorFor(absl::InvalidArgumentError(
          "the Content-Length header is not one decimal number of bytes"));
    }
    length = n;
  }
  if (length > payload_max_bytes_) {
    HttpError e = HttpErrorOf(413, absl::StrCat("the request body is ", length,
                                                " bytes; this server accepts at most ",
                                                payload_max_bytes_),
                              "request_too_large");
    return e;
  }
  return std::nullopt;
}

void GuardedServer::AnswerEarly(const httplib::Request& req, httplib::Response& res,
                                Connection* c, const HttpError& error) const {
  res.status = error.status;
  for (const auto& [name, value] : ErrorHeaders(error)) res.set_header(name, value);
  // Ollama's clients read {"error": "..."}.
  res.set_content(Dump(IsOllamaPath(req.path) ? OllamaErrorBody(error) : error.body),
                  "application/json");
  // The body was not read (a 411's client may send one it did not frame):
  // the next bytes on the connection are not a request head.
  if (c->head_error || error.status == 411 || BodyPending(req)) c->must_close = true;
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  Connection* c = guard_.Admit(sock);
  if (c == nullptr) {
    WriteWholeResponse(sock, ErrorFor(absl::UnavailableError(
                                          "every connection of this server (or of this client "
                                          "address) is serving a request; retry shortly"),
                                      1));
    CloseLingering(sock, 64 << 10, absl::Milliseconds(50));
    return true;
  }
  const ConnectionLimits& limits = guard_.limits();
  GuardedStream stream(sock, &guard_);
  // The first request's head is timed from the accept, later ones from
  // their first byte.
  absl::Time head_from = absl::Now();
  bool ret = false;
  for (size_t left = keep_alive_max_count_; svr_sock_ != INVALID_SOCKET && left > 0; --left) {
    if (left != keep_alive_max_count_) {
      if (!stream.WaitForRequest(absl::Now() + limits.idle_timeout)) break;
      head_from = absl::Now();
    }
    stream.BeginHead(head_from + limits.header_timeout);
    bool member = false;
    bool connection_closed = false;
    ret = process_request(stream, left == 1, connection_closed, [&](httplib::Request& req) {
      member = SetUpRequest(req, stream, c);
    });
    guard_.SetTrust(c, member ? ConnectionTrust::kIdleMember : ConnectionTrust::kStranger);
    if (!ret || connection_closed || c->must_close || stream.failed()) break;
  }
  const bool linger = c->must_close && !stream.failed();
  guard_.Release(c);
  if (linger) {
    CloseLingering(sock, kLingerBytes, kLingerWait);
  } else {
    shutdown(sock, SHUT_RDWR);
    close(sock);
  }
  return ret;
}

}  // namespace hearth::serve

#include "generation_call.h"

#include <utility>

#include "http_routes.h"
#include "page_views.h"
#include "raw_head.h"
#include "request_gate.h"

namespace hearth::serve {
namespace {

// Shared by a streamed response's provider and releaser (httplib copies
// both), or held by the handler for a whole answer.
struct Answer {
  const ServeContext* ctx = nullptr;
  RequestId id;
  std::shared_ptr<RequestChannel> channel;
  std::shared_ptr<AnswerFormat> format;
  // The connection being answered; null without a ConnectionGuard.
  const Connection* conn = nullptr;
  bool started = false;
  bool ended = false;
  bool cancelled = false;
  // Whole answers: the text so far, and its tokens' logprobs when asked.
  std::string text;
  std::vector<TokenLogprob> logprobs;
};

// Cancels the request once its client is gone (at most once).
void CancelIfGone(Answer& a) {
  if (a.cancelled || a.conn == nullptr || !a.conn->PeerGone()) return;
  a.ctx->engine->Cancel(a.id, /*disconnected=*/true);
  a.cancelled = true;
}

// Writes `out`; a client gone cancels the request (false), an answer that
// `ended` closes the body.
bool Send(Answer& a, httplib::DataSink& sink, const std::string& out, bool ended) {
  if (!sink.write(out.data(), out.size())) {
    a.ctx->engine->Cancel(a.id, /*disconnected=*/true);
    return false;
  }
  if (ended) {
    a.ended = true;
    sink.done();
  }
  return true;
}

// One call of the streaming provider: waits a little for text, then writes
// what came, or the keep-alive, or (a format without one) looks at the
// connection. httplib calls it again at once while it returns true.
bool StreamSome(Answer& a, httplib::DataSink& sink) {
  std::string text;
  std::vector<TokenLogprob> logprobs;
  const bool ended = a.channel->Wait(a.ctx->limits.keepalive_every, &text, &logprobs);
  std::string out;
  if (!a.started) out += a.format->Opening();
  a.started = true;
  if (!text.empty() || !logprobs.empty()) out += a.format->Piece(text, logprobs);
  if (ended) out += a.format->Tail(a.channel->end());
  if (out.empty()) out = a.format->KeepAlive();
  if (out.empty()) {
    CancelIfGone(a);
    return true;
  }
  return Send(a, sink, out, ended);
}

// Waits for a whole answer's end, cancelling the request if its client
// leaves meanwhile.
void AwaitWhole(Answer& a) {
  while (!a.channel->Wait(a.ctx->limits.keepalive_every, &a.text, &a.logprobs)) CancelIfGone(a);
  a.ended = true;
}

}  // namespace

absl::Status MayGenerate(const ServeContext& ctx, const httplib::Request& req) {
  if (ctx.engine->intake_closed()) return absl::UnavailableError("the server is shutting down");
  absl::StatusOr<Caller> caller = CallerOf(*ctx.directory, req);
  return caller.ok() ? MayCall(*caller) : caller.status();
}

absl::StatusOr<AdmittedCall> AdmitRequest(const ServeContext& ctx, const httplib::Request& req,
                                          CallHeaders* headers) {
  if (absl::Status may = MayGenerate(ctx, req); !may.ok()) return may;
  *headers = CallHeadersOf(req);
  return AdmitCall(ctx, *headers);
}

CallHeaders CallHeadersOf(const httplib::Request& req) {
  return {RawHeader(req, "Authorization"), RawHeader(req, "X-Api-Key"),
          RawHeader(req, "X-Hearth-Class"), RawHeader(req, "X-Hearth-Parent")};
}

void SubmitAndAnswer(const ServeContext& ctx, GenerationJob job, bool stream,
                     std::shared_ptr<AnswerFormat> format, httplib::Response& res) {
  const UserId user = job.user;
  absl::StatusOr<Submission> s = ctx.engine->Submit(std::move(job));
  if (!s.ok()) {
    const int retry = s.status().code() == absl::StatusCode::kResourceExhausted
                          ? RetryAfterSeconds(ctx, user, s.status())
                          : 0;
    return ReplyError(res, format->Error(s.status(), retry));
  }
  auto a = std::make_shared<Answer>();
  a->ctx = &ctx;
  a->id = s->id;
  a->channel = s->channel;
  a->format = std::move(format);
  a->conn = ctx.connections == nullptr ? nullptr : ctx.connections->Current();
  const std::string shown = ctx.ids->Issue(s->id, user);
  a->format->Begin(shown);
  res.set_header("X-Hearth-Request-Id", shown);
  if (stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        a->format->StreamContentType(),
        [a](size_t, httplib::DataSink& sink) { return StreamSome(*a, sink); },
        [a](bool) {
          if (!a->ended) a->ctx->engine->Cancel(a->id, /*disconnected=*/true);
        });
    return;
  }
  AwaitWhole(*a);
  const RequestEnd end = a->channel->end();
  if (!end.status.ok()) return ReplyError(res, a->format->Error(end.status));
  res.set_content(a->format->Whole(a->text, a->logprobs, end), "application/json");
}

}  // namespace hearth::serve

#include "generation_call.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"

#include "http_routes.h"
#include "page_views.h"
#include "raw_head.h"
#include "request_gate.h"

namespace hearth::serve {
namespace {

// One choice as its answer follows it.
struct Choice {
  RequestId id;
  std::shared_ptr<RequestChannel> channel;
  bool ended = false;
  // Whole answers: the text so far, its logprobs, and the end.
  ChoiceAnswer answer;
};

// Shared by a streamed response's provider and releaser (httplib copies
// both), or held by the handler for a whole answer.
struct Answer {
  const ServeContext* ctx = nullptr;
  std::vector<Choice> choices;
  std::shared_ptr<AnswerFormat> format;
  // The connection being answered; null without a ConnectionGuard.
  const Connection* conn = nullptr;
  bool started = false;
  bool ended = false;
  bool cancelled = false;
  // When a stream last wrote (keep-alives are due keepalive_every after).
  absl::Time last_write = absl::InfinitePast();
};

void CancelAll(Answer& a) {
  for (const Choice& c : a.choices) a.ctx->engine->Cancel(c.id, /*disconnected=*/true);
}

// Cancels the request once its client is gone (at most once).
void CancelIfGone(Answer& a) {
  if (a.cancelled || a.conn == nullptr || !a.conn->PeerGone()) return;
  CancelAll(a);
  a.cancelled = true;
}

// The answer's end as one: the first choice's prompt and cache figures,
// every choice's completion tokens, the first failure (in choice order).
RequestEnd Total(const Answer& a) {
  RequestEnd total = a.choices.front().answer.end;
  total.completion_tokens = 0;
  for (const Choice& c : a.choices) {
    total.completion_tokens += c.answer.end.completion_tokens;
    if (total.status.ok() && !c.answer.end.status.ok()) total.status = c.answer.end.status;
  }
  return total;
}

// Writes `out`; a client gone cancels the request (false), an answer that
// `ended` closes the body.
bool Send(Answer& a, httplib::DataSink& sink, const std::string& out, bool ended) {
  if (!sink.write(out.data(), out.size())) {
    CancelAll(a);
    return false;
  }
  a.last_write = absl::Now();
  if (ended) {
    a.ended = true;
    sink.done();
  }
  return true;
}

// One call of the streaming provider: waits a little for text (on the
// first choice not ended; the others' is taken as it is), then writes what
// came, or the keep-alive when due, or (a format without one) looks at the
// connection. httplib calls it again at once while it returns true.
bool StreamSome(Answer& a, httplib::DataSink& sink) {
  const absl::Duration every = a.ctx->limits.keepalive_every;
  // With several choices a wait on one must not hold back the others'.
  absl::Duration wait =
      a.choices.size() == 1 ? every : std::min(every, absl::Milliseconds(20));
  std::string out;
  if (!a.started) {
    for (size_t k = 0; k < a.choices.size(); ++k) out += a.format->Opening(static_cast<int>(k));
  }
  a.started = true;
  bool all_ended = true;
  for (size_t k = 0; k < a.choices.size(); ++k) {
    Choice& c = a.choices[k];
    if (c.ended) continue;
    std::string text;
    std::vector<TokenLogprob> logprobs;
    c.ended = c.channel->Wait(wait, &text, &logprobs);
    wait = absl::ZeroDuration();
    const int index = static_cast<int>(k);
    if (!text.empty() || !logprobs.empty()) out += a.format->Piece(text, logprobs, index);
    if (c.ended) {
      c.answer.end = c.channel->end();
      out += a.format->ChoiceEnd(c.answer.end, index);
      // One choice failed: the answer has, so the others stop too.
      if (!c.answer.end.status.ok()) CancelAll(a);
    }
    all_ended = all_ended && c.ended;
  }
  if (all_ended) out += a.format->Tail(Total(a));
  if (out.empty() && absl::Now() - a.last_write >= every) out = a.format->KeepAlive();
  if (out.empty()) {
    CancelIfGone(a);
    return true;
  }
  return Send(a, sink, out, all_ended);
}

// Waits for a whole answer's end, cancelling the request if its client
// leaves meanwhile.
void AwaitWhole(Answer& a) {
  for (Choice& c : a.choices) {
    while (!c.channel->Wait(a.ctx->limits.keepalive_every, &c.answer.text, &c.answer.logprobs)) {
      CancelIfGone(a);
    }
    c.ended = true;
    c.answer.end = c.channel->end();
    if (!c.answer.end.status.ok()) CancelAll(a);
  }
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
  for (size_t k = 0; k < s->channels.size(); ++k) {
    Choice c;
    c.id = RequestId(s->id.value() + k);
    c.channel = s->channels[k];
    a->choices.push_back(std::move(c));
  }
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
          if (!a->ended) CancelAll(*a);
        });
    return;
  }
  AwaitWhole(*a);
  const RequestEnd end = Total(*a);
  if (!end.status.ok()) return ReplyError(res, a->format->Error(end.status));
  std::vector<ChoiceAnswer> choices;
  for (Choice& c : a->choices) choices.push_back(std::move(c.answer));
  res.set_content(a->format->Whole(choices, end), "application/json");
}

}  // namespace hearth::serve

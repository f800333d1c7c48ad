// POST /v1/chat/completions and /v1/completions: prepare, submit, then
// answer whole or as server-sent events. A streaming client that goes away
// is noticed when a write fails (tokens, or the keep-alive comments written
// while it waits) or when httplib releases the response early. A whole
// answer is written once it is known, with its true status (an error is
// never sent under a 200 already committed); meanwhile the connection is
// checked for a client that left (a FIN, a reset, or unanswered TCP
// keep-alive probes: connection_guard.h). Either cancels the request.

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "http_routes.h"
#include "prepare_generation.h"
#include "page_views.h"
#include "raw_head.h"
#include "request_gate.h"

namespace hearth::serve {
namespace {

// Shared by a response's provider and releaser (httplib copies both).
struct Answer {
  const ServeContext* ctx = nullptr;
  RequestId id;
  std::shared_ptr<RequestChannel> channel;
  ResponseShape shape;
  bool include_usage = false;
  bool started = false;
  bool ended = false;
  // Non-streamed answers: the text so far.
  std::string text;
};

std::string StreamTail(const Answer& a, const RequestEnd& end) {
  std::string out;
  if (end.status.ok()) {
    out += SseEvent(Chunk(a.shape, "", absl::string_view(end.finish_reason)));
    if (a.include_usage) {
      out += SseEvent(UsageChunk(a.shape, Usage(end.prompt_tokens, end.completion_tokens, end.cached_prompt_tokens)));
    }
  } else {
    // OpenAI streams a failure after the headers as an error event.
    out += SseEvent(ErrorFor(end.status).body);
  }
  return out + "data: [DONE]\n\n";
}

// REQUIRES: the request finished (end.status is OK).
std::string WholeBody(const Answer& a, const RequestEnd& end) {
  return Dump(Completion(a.shape, a.text, end.finish_reason,
                         Usage(end.prompt_tokens, end.completion_tokens, end.cached_prompt_tokens)));
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
// what came (or a keep-alive comment).
bool StreamSome(Answer& a, httplib::DataSink& sink) {
  std::string text;
  const bool ended = a.channel->Wait(a.ctx->limits.keepalive_every, &text);
  std::string out;
  if (!a.started && a.shape.chat) out += SseEvent(Chunk(a.shape, "", std::nullopt, /*first=*/true));
  a.started = true;
  if (!text.empty()) out += SseEvent(Chunk(a.shape, text, std::nullopt));
  if (ended) out += StreamTail(a, a.channel->end());
  if (out.empty()) out = ": keep-alive\n\n";
  return Send(a, sink, out, ended);
}

// Waits for a whole answer's end, cancelling the request if its client
// leaves meanwhile.
void AwaitWhole(const ServeContext& ctx, Answer& a) {
  const Connection* conn = ctx.connections == nullptr ? nullptr : ctx.connections->Current();
  bool cancelled = false;
  while (!a.channel->Wait(ctx.limits.keepalive_every, &a.text)) {
    if (!cancelled && conn != nullptr && conn->PeerGone()) {
      ctx.engine->Cancel(a.id, /*disconnected=*/true);
      cancelled = true;
    }
  }
  a.ended = true;
}

void Respond(const ServeContext& ctx, const PreparedGeneration& prepared, const Submission& s,
             httplib::Response& res) {
  auto a = std::make_shared<Answer>();
  a->ctx = &ctx;
  a->id = s.id;
  a->channel = s.channel;
  a->shape.chat = prepared.request.chat;
  const std::string shown = ctx.ids->Issue(s.id, prepared.job.user);
  a->shape.id = absl::StrCat(prepared.request.chat ? "chatcmpl-" : "cmpl-", shown);
  a->shape.created = absl::ToUnixSeconds(absl::Now());
  a->shape.model = prepared.request.model;
  a->include_usage = prepared.request.include_usage;
  res.set_header("X-Hearth-Request-Id", shown);
  if (prepared.request.stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream", [a](size_t, httplib::DataSink& sink) { return StreamSome(*a, sink); },
        [a](bool) {
          if (!a->ended) a->ctx->engine->Cancel(a->id, /*disconnected=*/true);
        });
    return;
  }
  AwaitWhole(ctx, *a);
  const RequestEnd end = a->channel->end();
  if (!end.status.ok()) return ReplyError(res, ErrorFor(end.status));
  res.set_content(WholeBody(*a, end), "application/json");
}

void Generate(const ServeContext& ctx, const httplib::Request& req, httplib::Response& res,
              bool chat) {
  if (ctx.engine->intake_closed()) {
    return ReplyError(res, ErrorFor(absl::UnavailableError("the server is shutting down")));
  }
  absl::StatusOr<Caller> caller = CallerOf(*ctx.directory, req);
  absl::Status may = caller.ok() ? MayCall(*caller) : caller.status();
  if (!may.ok()) return ReplyError(res, ErrorFor(may));
  // Raw values (raw_head.h): no percent-decoding, NUL bytes kept.
  CallHeaders headers{RawHeader(req, "Authorization"), RawHeader(req, "X-Api-Key"),
                      RawHeader(req, "X-Hearth-Class"), RawHeader(req, "X-Hearth-Parent")};
  absl::StatusOr<PreparedGeneration> prepared = PrepareGeneration(ctx, headers, req.body, chat);
  if (!prepared.ok()) return ReplyError(res, ErrorFor(prepared.status()));
  const UserId user = prepared->job.user;
  absl::StatusOr<Submission> submitted = ctx.engine->Submit(prepared->job);
  if (!submitted.ok()) {
    const int retry = submitted.status().code() == absl::StatusCode::kResourceExhausted
                          ? RetryAfterSeconds(ctx, user, submitted.status())
                          : 0;
    return ReplyError(res, ErrorFor(submitted.status(), retry));
  }
  Respond(ctx, *prepared, *submitted, res);
}

}  // namespace

void ReplyError(httplib::Response& res, const HttpError& error) {
  res.status = error.status;
  for (const auto& [name, value] : ErrorHeaders(error)) res.set_header(name, value);
  res.set_content(Dump(error.body), "application/json");
}

void InstallGenerationRoutes(httplib::Server& server, const ServeContext& ctx) {
  server.Post("/v1/chat/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Generate(ctx, req, res, /*chat=*/true);
  });
  server.Post("/v1/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Generate(ctx, req, res, /*chat=*/false);
  });
}

}  // namespace hearth::serve

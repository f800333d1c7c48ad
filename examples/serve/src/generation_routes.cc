// POST /v1/chat/completions and /v1/completions: prepare, submit, then
// answer whole or as server-sent events. A client that goes away is noticed
// when a write fails (tokens, or the keep-alives written while it waits) or
// when httplib releases the response early; either cancels its request.

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "http_routes.h"
#include "prepare_generation.h"

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

std::string WholeBody(const Answer& a, const RequestEnd& end) {
  if (!end.status.ok()) return Dump(ErrorFor(end.status).body);
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

// One call of the late non-streamed provider: whitespace until the end,
// then the JSON (leading whitespace is valid JSON).
bool WholeSome(Answer& a, httplib::DataSink& sink) {
  const bool ended = a.channel->Wait(a.ctx->limits.keepalive_every, &a.text);
  return Send(a, sink, ended ? WholeBody(a, a.channel->end()) : std::string(" "), ended);
}

void Respond(const ServeContext& ctx, const PreparedGeneration& prepared, const Submission& s,
             httplib::Response& res) {
  auto a = std::make_shared<Answer>();
  a->ctx = &ctx;
  a->id = s.id;
  a->channel = s.channel;
  a->shape.chat = prepared.request.chat;
  a->shape.id = absl::StrCat(prepared.request.chat ? "chatcmpl-" : "cmpl-", s.id.value());
  a->shape.created = absl::ToUnixSeconds(absl::Now());
  a->shape.model = prepared.request.model;
  a->include_usage = prepared.request.include_usage;
  res.set_header("X-Hearth-Request-Id", std::to_string(s.id.value()));
  auto release = [a](bool) {
    if (!a->ended) a->ctx->engine->Cancel(a->id, /*disconnected=*/true);
  };
  if (prepared.request.stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream", [a](size_t, httplib::DataSink& sink) { return StreamSome(*a, sink); },
        release);
    return;
  }
  // Most answers come before keepalive_after: they get their true status.
  const absl::Time until = absl::Now() + ctx.limits.keepalive_after;
  bool ended = false;
  while (!ended && absl::Now() < until) {
    ended = a->channel->Wait(until - absl::Now(), &a->text);
  }
  if (ended) {
    a->ended = true;
    const RequestEnd end = a->channel->end();
    if (!end.status.ok()) return ReplyError(res, ErrorFor(end.status));
    res.set_content(WholeBody(*a, end), "application/json");
    return;
  }
  res.set_chunked_content_provider(
      "application/json", [a](size_t, httplib::DataSink& sink) { return WholeSome(*a, sink); },
      release);
}

void Generate(const ServeContext& ctx, const httplib::Request& req, httplib::Response& res,
              bool chat) {
  if (ctx.engine->intake_closed()) {
    return ReplyError(res, ErrorFor(absl::UnavailableError("the server is shutting down")));
  }
  CallHeaders headers{req.get_header_value("Authorization"), req.get_header_value("X-Api-Key"),
                      req.get_header_value("X-Hearth-Class"),
                      req.get_header_value("X-Hearth-Parent")};
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
  if (error.retry_after_s > 0) res.set_header("Retry-After", std::to_string(error.retry_after_s));
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

// POST /v1/hearth/documents: a document summarised chunk by chunk.
//
//   1. the caller's key and the body (document_request.h), on the HTTP
//      thread, in one of the member's turns (member_turns.h);
//   2. parsing, chunking and tokenising on the background `documents` job
//      queue (document_chunk_job.h);
//   3. one completion per chunk, all submitted at once in the GPU
//      scheduler's `documents` work class (or X-Hearth-Class), so the
//      household policy runs them on what voice and chat leave;
//   4. one answer combining them, in chunk order:
//      {"id": "doc-<first request id>", "object": "hearth.document",
//       "created", "model", "work_class",
//       "summary": the chunk summaries joined by blank lines,
//       "chunks": [{"index", "request_id", "text_bytes", "summary",
//                   "finish_reason", "prompt_tokens", "completion_tokens"}],
//       "usage": {"prompt_tokens", "completion_tokens", "total_tokens"}}
// A chunk that fails fails the whole answer (its error, the other chunks
// cancelled). As for whole completions, the answer is written once it is
// known, with its true status; meanwhile a client that leaves is noticed
// (connection_guard.h) and its chunks cancelled. Request ids are the ones
// clients are shown (public_request_ids.h).

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "document_chunk_job.h"
#include "document_request.h"
#include "http_routes.h"
#include "prepare_generation.h"
#include "page_views.h"
#include "raw_head.h"
#include "request_gate.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

struct ChunkCall {
  Submission submission;
  std::string shown_id;
  int64_t text_bytes = 0;
  std::string text;
  bool ended = false;
};

// One document's answer: its chunks' calls.
struct DocumentAnswer {
  const ServeContext* ctx = nullptr;
  std::string model;
  std::string work_class;
  int64_t created = 0;
  std::vector<ChunkCall> chunks;

  void CancelAll() const {
    for (const ChunkCall& c : chunks) {
      if (!c.ended) ctx->engine->Cancel(c.submission.id, /*disconnected=*/true);
    }
  }
  // Waits up to `timeout` for the chunks still running; returns whether
  // all have ended.
  bool Wait(absl::Duration timeout) {
    const absl::Time until = absl::Now() + timeout;
    for (ChunkCall& c : chunks) {
      while (!c.ended) {
        const absl::Duration left = until - absl::Now();
        if (left <= absl::ZeroDuration()) return false;
        c.ended = c.submission.channel->Wait(left, &c.text);
      }
    }
    return true;
  }
  // The first chunk that did not finish, if any.
  absl::Status Failure() const {
    for (const ChunkCall& c : chunks) {
      if (absl::Status s = c.submission.channel->end().status; !s.ok()) return s;
    }
    return absl::OkStatus();
  }
};

Json AnswerJson(const DocumentAnswer& a) {
  Json chunks = Json::array();
  std::vector<std::string> summaries;
  int64_t prompt = 0, completion = 0;
  for (size_t i = 0; i < a.chunks.size(); ++i) {
    const ChunkCall& c = a.chunks[i];
    const RequestEnd end = c.submission.channel->end();
    chunks.push_back({{"index", i},
                      {"request_id", absl::StrCat("cmpl-", c.shown_id)},
                      {"text_bytes", c.text_bytes},
                      {"summary", c.text},
                      {"finish_reason", end.finish_reason},
                      {"prompt_tokens", end.prompt_tokens},
                      {"completion_tokens", end.completion_tokens}});
    summaries.push_back(c.text);
    prompt += end.prompt_tokens;
    completion += end.completion_tokens;
  }
  return {{"id", absl::StrCat("doc-", a.chunks.front().shown_id)},
          {"object", "hearth.document"},
          {"created", a.created},
          {"model", a.model},
          {"work_class", a.work_class},
          {"summary", absl::StrJoin(summaries, "\n\n")},
          {"chunks", chunks},
          {"usage", {{"prompt_tokens", prompt},
                     {"completion_tokens", completion},
                     {"total_tokens", prompt + completion}}}};
}

// Submits every chunk; on a refusal cancels those already in and returns it.
absl::Status SubmitChunks(const ServeContext& ctx, const Caller& caller,
                          const DocumentRequest& request, std::vector<ChunkPrompt> prompts,
                          DocumentAnswer& answer) {
  for (ChunkPrompt& p : prompts) {
    GenerationJob job;
    job.user = caller.user;
    job.work_class = caller.work_class;
    job.prompt = std::move(p.tokens);
    job.max_tokens = request.max_tokens;
    job.sampling = request.sampling;
    absl::StatusOr<Submission> s = ctx.engine->Submit(std::move(job));
    if (!s.ok()) {
      answer.CancelAll();
      return s.status();
    }
    ChunkCall& call = answer.chunks.emplace_back();
    call.submission = *std::move(s);
    call.shown_id = ctx.ids->Issue(call.submission.id, caller.user);
    call.text_bytes = p.text_bytes;
  }
  return absl::OkStatus();
}

void Respond(DocumentAnswer& a, httplib::Response& res) {
  const ServeContext& ctx = *a.ctx;
  res.set_header("X-Hearth-Request-Id", a.chunks.front().shown_id);
  const Connection* conn = ctx.connections == nullptr ? nullptr : ctx.connections->Current();
  bool cancelled = false;
  while (!a.Wait(ctx.limits.keepalive_every)) {
    if (!cancelled && conn != nullptr && conn->PeerGone()) {
      a.CancelAll();
      cancelled = true;
    }
  }
  const absl::Status failed = a.Failure();
  if (!failed.ok()) return ReplyError(res, ErrorFor(failed));
  res.set_content(Dump(AnswerJson(a)), "application/json");
}

void SummariseDocument(const ServeContext& ctx, const httplib::Request& req,
                       httplib::Response& res) {
  if (ctx.engine->intake_closed()) {
    return ReplyError(res, ErrorFor(absl::UnavailableError("the server is shutting down")));
  }
  absl::StatusOr<Caller> caller = CallerOf(*ctx.directory, req);
  absl::Status may = caller.ok() ? MayCall(*caller) : caller.status();
  if (!may.ok()) return ReplyError(res, ErrorFor(may));
  QueryParams query(req.params.begin(), req.params.end());
  // The member's turn before parsing (member_turns.h); null in unit tests.
  absl::StatusOr<MemberTurns::Turn> turn =
      ctx.document_turns == nullptr || !caller->user.valid()
          ? MemberTurns::Turn()
          : ctx.document_turns->Acquire(caller->user,
                                        absl::Now() + ctx.limits.document_job_timeout);
  if (!turn.ok()) return ReplyError(res, ErrorFor(turn.status()));
  absl::StatusOr<DocumentRequest> request =
      ParseDocumentRequest(req.get_header_value("Content-Type"), req.body, query);
  if (!request.ok()) return ReplyError(res, ErrorFor(request.status()));
  if (request->model.empty()) request->model = ctx.directory->model_name();
  // Documents go to the documents class whatever the key's default; a
  // header may still name another.
  const std::string header = RawHeader(req, "X-Hearth-Class");
  if (absl::Status s = ctx.directory->ResolveClass(request->model,
                                                   header.empty() ? "documents" : header, *caller);
      !s.ok()) {
    return ReplyError(res, ErrorFor(s));
  }
  absl::StatusOr<std::vector<ChunkPrompt>> prompts =
      ChunkDocumentOnQueue(ctx, *request, *std::move(turn));
  if (!prompts.ok()) return ReplyError(res, ErrorFor(prompts.status()));
  if (prompts->empty()) {
    return ReplyError(res, ErrorFor(absl::InvalidArgumentError("'text' gives no chunks")));
  }
  DocumentAnswer answer;
  answer.ctx = &ctx;
  answer.model = request->model;
  answer.work_class = ctx.household->classes[caller->work_class.value()].name;
  answer.created = absl::ToUnixSeconds(absl::Now());
  if (absl::Status s = SubmitChunks(ctx, *caller, *request, *std::move(prompts), answer);
      !s.ok()) {
    const bool refused = s.code() == absl::StatusCode::kResourceExhausted;
    return ReplyError(res, ErrorFor(s, refused ? RetryAfterSeconds(ctx, caller->user, s) : 0));
  }
  Respond(answer, res);
}

}  // namespace

void InstallDocumentRoutes(httplib::Server& server, const ServeContext& ctx) {
  server.Post("/v1/hearth/documents", [&ctx](const httplib::Request& req, httplib::Response& res) {
    SummariseDocument(ctx, req, res);
  });
}

}  // namespace hearth::serve

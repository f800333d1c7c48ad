// File: examples/serve/src/generation_call.h
//
// What every generation route (OpenAI's /v1/chat/completions and
// /v1/completions, Ollama's /api/chat and /api/generate) does whatever its
// API: refuse while draining and for keys that make no calls, read the
// headers that matter, and, once the route has prepared a job
// (prepare_generation.h), submit it and answer it -- whole, written once it
// is known with its true status, or streamed. An `AnswerFormat` says only
// how the API spells text, the end and errors.
//
// A streamed answer writes as text comes; while none comes it writes the
// format's keep-alive, or, in a format that has none (NDJSON), checks the
// connection instead (connection_guard.h). A failed write, a client gone,
// or httplib releasing the response early cancels the request. A whole
// answer checks the connection while it waits, and cancels the same way.
//
// Thread-safety: an HTTP handler's thread; the format is used by one
// answer at a time.
//
// Example:
//   if (absl::Status may = MayGenerate(ctx, req); !may.ok()) return reply(may);
//   absl::StatusOr<PreparedGeneration> p = PrepareGeneration(ctx, CallHeadersOf(req), req.body, true);
//   SubmitAndAnswer(ctx, p->job, p->request.stream, std::make_shared<MyFormat>(), res);

#ifndef HEARTH_SERVE_GENERATION_CALL_H_
#define HEARTH_SERVE_GENERATION_CALL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "httplib.h"
#include "openai_response.h"
#include "prepare_generation.h"
#include "request_channel.h"
#include "serve_context.h"
#include "serve_engine.h"
#include "token_logprobs.h"

namespace hearth::serve {

// One choice of a whole answer: its text, its tokens' logprobs (empty
// unless asked for) and how it ended.
struct ChoiceAnswer {
  std::string text;
  std::vector<TokenLogprob> logprobs;
  RequestEnd end;
};

// How one API spells a generation's answer. A request asking for several
// choices (GenerationJob::n, OpenAI's `n`) has its pieces and ends told
// apart by `index`; an API without choices only ever sees index 0.
class AnswerFormat {
 public:
  virtual ~AnswerFormat() = default;

  // Called once the request is submitted, before anything is written:
  // the id its client is shown (public_request_ids.h).
  virtual void Begin(absl::string_view shown_id) {}
  // The streamed body's Content-Type.
  virtual std::string StreamContentType() const = 0;
  // What a stream opens with for choice `index`, written on its first
  // write ("": nothing).
  virtual std::string Opening(int index) { return ""; }
  // The stream's bytes for choice `index`'s `text` and the logprobs of the
  // tokens it completes (request_channel.h; empty unless the request asked
  // for them), not both empty.
  virtual std::string Piece(absl::string_view text, const std::vector<TokenLogprob>& logprobs,
                            int index) = 0;
  // Choice `index` ended (its last Piece written): what the stream says
  // then ("": nothing; the failure of one is told by Tail).
  virtual std::string ChoiceEnd(const RequestEnd& end, int index) { return ""; }
  // The stream's last bytes, once every choice ended: the answer's end
  // (`end` sums the choices: their completion tokens, the first failure),
  // or, the 200 sent, the failure.
  virtual std::string Tail(const RequestEnd& end) = 0;
  // Written while no text comes, so that a write notices a client that
  // left; "" where the format allows nothing between its records.
  virtual std::string KeepAlive() const { return ""; }
  // A whole answer's JSON body. REQUIRES: `end` (the sum, as Tail's) is OK.
  virtual std::string Whole(const std::vector<ChoiceAnswer>& choices, const RequestEnd& end) = 0;
  // The error answer for `status` (REQUIRES: not OK), in this API's shape.
  virtual HttpError Error(const absl::Status& status, int retry_after_s = 0) const = 0;
};

// Unavailable while draining (SIGTERM), else the key's refusal: 401 for
// none or a bad one, 403 for a key of no member.
absl::Status MayGenerate(const ServeContext& ctx, const httplib::Request& req);

// MayGenerate, then the call's headers (into `*headers`) and AdmitCall
// (prepare_generation.h): the first refusal, or the admitted call whose
// body the route parses next, in the member's turn.
absl::StatusOr<AdmittedCall> AdmitRequest(const ServeContext& ctx, const httplib::Request& req,
                                          CallHeaders* headers);

// The request's key, class and parent headers, raw (raw_head.h: no
// percent-decoding, NUL bytes kept).
CallHeaders CallHeadersOf(const httplib::Request& req);

// Submits `job` and answers it into `res` in `format`, streamed when
// `stream`. A refusal (a member's quota or queue: 429 with Retry-After;
// draining: 503) is answered in `format`'s shape. Sets
// X-Hearth-Request-Id.
void SubmitAndAnswer(const ServeContext& ctx, GenerationJob job, bool stream,
                     std::shared_ptr<AnswerFormat> format, httplib::Response& res);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_GENERATION_CALL_H_

// POST /tokenize and POST /detokenize, llama-server's token endpoints
// (tokenize_request.h, tokenize_response.h). Keyed like the generation
// routes (a member's key: MayCall) and paid for the same way: the body is
// read in one of the member's turns, a text whose bytes alone cannot fit
// the context is refused before tokenising (prompt_bound.h: /tokenize
// counts at most what a prompt may hold), and the tokenising, or the
// pieces' lookup, runs in that turn on the interactive queue
// (member_job.h), so one member's megabytes wait behind that member only.
// After SIGTERM both are refused 503, as generation is.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "http_routes.h"
#include "member_job.h"
#include "page_views.h"
#include "prompt_bound.h"
#include "request_gate.h"
#include "tokenize_request.h"
#include "tokenize_response.h"

namespace hearth::serve {
namespace {

// The member's turn, or the error (503 while draining, 401, 403, 504) that
// refuses the call. Draining refuses first, as generation does: the server
// is going away, and a key check would tell the caller nothing it can use.
absl::StatusOr<MemberTurns::Turn> CallerTurn(const ServeContext& ctx,
                                             const httplib::Request& req) {
  if (ctx.engine->intake_closed()) return absl::UnavailableError("the server is shutting down");
  absl::StatusOr<Caller> caller = CallerOf(*ctx.directory, req);
  if (!caller.ok()) return caller.status();
  if (absl::Status may = MayCall(*caller); !may.ok()) return may;
  return TakeMemberTurn(ctx, caller->user);
}

absl::StatusOr<std::string> Tokenize(const ServeContext& ctx, const httplib::Request& req) {
  absl::StatusOr<MemberTurns::Turn> turn = CallerTurn(ctx, req);
  if (!turn.ok()) return turn.status();
  absl::StatusOr<TokenizeRequest> r = ParseTokenizeRequest(req.body);
  if (!r.ok()) return r.status();
  // The bound of a prompt with its one least token of answer.
  const PromptBudget budget{ctx.engine->context_length(), ctx.text->max_token_bytes(),
                            std::nullopt};
  if (absl::Status s = CheckPromptBytes(r->content.size(), budget); !s.ok()) return s;
  const ModelText* text = ctx.text;
  return CallInMemberTurn<std::string>(
      ctx, *std::move(turn), "tokenize for /tokenize",
      [text, budget, r = *std::move(r)]() -> absl::StatusOr<std::string> {
        const int32_t room = budget.context - 1;
        absl::StatusOr<std::vector<int32_t>> tokens =
            text->TokenizeUpTo(r.content, r.add_special, r.parse_special, room);
        if (tokens.status().code() == absl::StatusCode::kOutOfRange) {
          return absl::OutOfRangeError(absl::StrCat(
              tokens.status().message(), "; /tokenize counts at most ", room,
              " tokens (this server's context of ", budget.context, " less one of answer)"));
        }
        if (!tokens.ok()) return tokens.status();
        return Dump(TokenizeResponse(*tokens, r.with_pieces, [text](int32_t t) {
          return text->Piece(t, /*spell_control=*/true);
        }));
      });
}

absl::StatusOr<std::string> Detokenize(const ServeContext& ctx, const httplib::Request& req) {
  absl::StatusOr<MemberTurns::Turn> turn = CallerTurn(ctx, req);
  if (!turn.ok()) return turn.status();
  const ModelText* text = ctx.text;
  // No text this server holds is longer than its context.
  absl::StatusOr<DetokenizeRequest> r = ParseDetokenizeRequest(
      req.body, text->vocab_size(), static_cast<size_t>(ctx.engine->context_length()));
  if (!r.ok()) return r.status();
  return CallInMemberTurn<std::string>(
      ctx, *std::move(turn), "detokenize for /detokenize",
      [text, r = *std::move(r)]() -> absl::StatusOr<std::string> {
        return Dump(DetokenizeResponse(
            r.tokens, [text](int32_t t) { return text->Piece(t, /*spell_control=*/true); }));
      });
}

void Reply(httplib::Response& res, const absl::StatusOr<std::string>& body) {
  if (!body.ok()) return ReplyError(res, ErrorFor(body.status()));
  res.set_content(*body, "application/json");
}

}  // namespace

void InstallTokenizeRoutes(httplib::Server& server, const ServeContext& ctx) {
  server.Post("/tokenize", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Reply(res, Tokenize(ctx, req));
  });
  server.Post("/detokenize", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Reply(res, Detokenize(ctx, req));
  });
}

}  // namespace hearth::serve

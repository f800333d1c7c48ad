#include "prepare_generation.h"

#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "grammar_field.h"
#include "grammar_sampler.h"
#include "logit_bias_field.h"
#include "member_job.h"
#include "prompt_bound.h"
#include "schema_grammar.h"

namespace hearth::serve {
namespace {

// The request an X-Hearth-Parent names: one of the caller's own, by the id
// its client was shown. Another member's id reads as no id at all, so the
// answer cannot tell whose it is.
absl::StatusOr<RequestId> ParseParent(const ServeContext& ctx, absl::string_view text,
                                      UserId caller) {
  if (text.empty()) return RequestId();
  absl::string_view shown = text;
  if (!absl::ConsumePrefix(&shown, "chatcmpl-")) absl::ConsumePrefix(&shown, "cmpl-");
  std::optional<RequestId> id =
      ctx.ids == nullptr ? std::nullopt : ctx.ids->Resolve(shown, caller);
  if (!id) {
    return absl::InvalidArgumentError(absl::StrCat(
        "X-Hearth-Parent \"", text, "\" names no recent request of this member (send the id of "
        "one of your answers: \"chatcmpl-<id>\", \"cmpl-<id>\" or X-Hearth-Request-Id)"));
  }
  return *id;
}

// Tokens the answer needs: what was asked, or at least one.
int32_t AnswerTokens(const GenerationRequest& r) { return r.max_tokens ? *r.max_tokens : 1; }

std::string AnswerText(const GenerationRequest& r) {
  return r.max_tokens ? absl::StrCat("max_tokens (", *r.max_tokens, ")")
                      : std::string("at least one token of answer");
}

// The generation budget: what was asked, or the default (or all the context
// leaves, when asked), within the context.
absl::StatusOr<int32_t> MaxTokens(const ServeContext& ctx, const GenerationRequest& r,
                                  int32_t prompt_tokens) {
  const int32_t context = ctx.engine->context_length();
  if (prompt_tokens >= context) {
    return absl::OutOfRangeError(absl::StrCat(
        "the prompt is ", prompt_tokens, " tokens; this server's context is ", context,
        " tokens (prompt plus answer)"));
  }
  if (!r.max_tokens && r.until_context) return context - prompt_tokens;
  if (!r.max_tokens) return std::min(ctx.limits.default_max_tokens, context - prompt_tokens);
  if (int64_t{prompt_tokens} + *r.max_tokens > context) {
    return absl::OutOfRangeError(absl::StrCat(
        "the prompt (", prompt_tokens, " tokens) plus max_tokens (", *r.max_tokens,
        ") exceeds this server's context of ", context, " tokens"));
  }
  return *r.max_tokens;
}

// What the member's CPU turn produces: the prompt's tokens and the
// request's compiled grammar (null: none).
struct PromptWork {
  std::vector<int32_t> tokens;
  CompiledGrammar grammar;
};

// The request's grammar: its GBNF, or its JSON schema converted
// (schema_grammar.h) and held to a written grammar's bounds
// (grammar_field.h), compiled for the vocabulary; null when it asks for
// none. Every failure is InvalidArgument naming `field`.
absl::StatusOr<CompiledGrammar> RequestGrammar(const llama_vocab* vocab, std::string gbnf,
                                               const std::string& schema,
                                               const std::string& field) {
  if (!schema.empty()) {
    absl::StatusOr<std::string> converted = JsonSchemaToGrammar(schema, field);
    if (!converted.ok()) return converted.status();
    if (absl::Status s = CheckGrammarText(*converted, field, kMaxSchemaGrammarBytes); !s.ok()) {
      return s;
    }
    gbnf = *std::move(converted);
  }
  if (gbnf.empty()) return CompiledGrammar();
  return CompileGrammar(vocab, gbnf, field);
}

// The request's grammar compiled first (a bad one is a 400 before any
// tokenising), then the prompt's token ids: the chat rendered with the
// model's template, its bytes checked against the context (prompt_bound.h),
// then tokenized in one pass that stops counting past what fits. CPU work
// that grows with the prompt, so it runs in the member's `turn` on the
// interactive job queue (member_job.h).
absl::StatusOr<PromptWork> PromptTokens(const ServeContext& ctx, GenerationRequest& request,
                                        MemberTurns::Turn turn) {
  const ModelText* text = ctx.text;
  const bool chat = request.chat;
  const PromptBudget budget{ctx.engine->context_length(), text->max_token_bytes(),
                            request.max_tokens};
  const int32_t room = budget.context - AnswerTokens(request);
  const std::string answer = AnswerText(request);
  // Moved, not copied: the job may outlive this call (job_call.h), and the
  // request needs neither again.
  auto tokenize = [text, chat, budget, room, answer, messages = std::move(request.messages),
                   prompt = std::move(request.prompt), grammar = std::move(request.grammar),
                   schema = std::move(request.json_schema),
                   grammar_field = request.grammar_field]() -> absl::StatusOr<PromptWork> {
    PromptWork work;
    absl::StatusOr<CompiledGrammar> compiled =
        RequestGrammar(text->vocab(), grammar, schema, grammar_field);
    if (!compiled.ok()) return compiled.status();
    work.grammar = *std::move(compiled);
    absl::StatusOr<std::string> rendered =
        chat ? text->RenderChat(messages) : absl::StatusOr<std::string>(prompt);
    if (!rendered.ok()) return rendered.status();
    if (absl::Status s = CheckPromptBytes(rendered->size(), budget); !s.ok()) return s;
    absl::StatusOr<std::vector<int32_t>> tokens =
        text->TokenizeAtMost(*rendered, /*templated=*/chat, room);
    if (tokens.status().code() == absl::StatusCode::kOutOfRange) {
      return absl::OutOfRangeError(absl::StrCat(tokens.status().message(), "; with ", answer,
                                                " that exceeds this server's context of ",
                                                budget.context, " tokens (prompt plus answer)"));
    }
    if (!tokens.ok()) return tokens.status();
    work.tokens = *std::move(tokens);
    return work;
  };
  return CallInMemberTurn<PromptWork>(
      ctx, std::move(turn), chat ? "template and tokenize a chat" : "tokenize a prompt",
      std::move(tokenize));
}

// The checks that need no more than the request's fields, before any
// templating or tokenising: an answer that leaves no room for a prompt, a
// completion prompt whose bytes cannot fit (a chat's are checked once
// rendered: a template may add or drop text).
absl::Status CheckBeforeTokens(const ServeContext& ctx, const GenerationRequest& r) {
  if (absl::Status s = CheckLogitBiasTokens(r.sampling.logit_bias, ctx.text->vocab_size());
      !s.ok()) {
    return s;
  }
  const int32_t context = ctx.engine->context_length();
  if (AnswerTokens(r) >= context) {
    return absl::OutOfRangeError(absl::StrCat("max_tokens (", AnswerTokens(r),
                                              ") leaves no room for a prompt in this server's "
                                              "context of ", context, " tokens"));
  }
  if (r.chat) return absl::OkStatus();
  return CheckPromptBytes(r.prompt.size(), {context, ctx.text->max_token_bytes(), r.max_tokens});
}

}  // namespace

absl::StatusOr<AdmittedCall> AdmitCall(const ServeContext& ctx, const CallHeaders& headers) {
  absl::StatusOr<Caller> caller = ctx.directory->Authenticate(headers.authorization, headers.api_key);
  if (!caller.ok()) return caller.status();
  absl::StatusOr<MemberTurns::Turn> turn = TakeMemberTurn(ctx, caller->user);
  if (!turn.ok()) return turn.status();
  return AdmittedCall{*std::move(caller), *std::move(turn)};
}

absl::StatusOr<PreparedGeneration> PrepareRequest(const ServeContext& ctx,
                                                  const CallHeaders& headers, AdmittedCall call,
                                                  GenerationRequest request) {
  Caller& caller = call.caller;
  if (absl::Status s = ctx.directory->ResolveClass(request.model, headers.hearth_class, caller);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<RequestId> parent = ParseParent(ctx, headers.hearth_parent, caller.user);
  if (!parent.ok()) return parent.status();
  if (absl::Status s = CheckBeforeTokens(ctx, request); !s.ok()) return s;
  absl::StatusOr<PromptWork> work = PromptTokens(ctx, request, std::move(call.turn));
  if (!work.ok()) return work.status();
  const std::vector<int32_t>* tokens = &work->tokens;
  absl::StatusOr<int32_t> max_tokens =
      MaxTokens(ctx, request, static_cast<int32_t>(tokens->size()));
  if (!max_tokens.ok()) return max_tokens.status();

  PreparedGeneration out;
  out.member = caller.member;
  out.job.user = caller.user;
  out.job.work_class = caller.work_class;
  out.job.parent = *parent;
  // Only a chat's template beginning is public; a completion prompt is all
  // the member's.
  out.job.shared_prefix_tokens = request.chat ? ctx.text->TemplatePrefixLength(*tokens) : 0;
  out.job.prompt = std::move(work->tokens);
  out.job.max_tokens = *max_tokens;
  out.job.sampling = request.sampling;
  out.job.stop = request.stop;
  out.job.grammar = std::move(work->grammar);
  out.job.logprobs = request.logprobs;
  out.job.n = request.n;
  out.request = std::move(request);
  return out;
}

absl::StatusOr<PreparedGeneration> PrepareGeneration(const ServeContext& ctx,
                                                     const CallHeaders& headers,
                                                     absl::string_view body, bool chat) {
  absl::StatusOr<AdmittedCall> call = AdmitCall(ctx, headers);
  if (!call.ok()) return call.status();
  absl::StatusOr<GenerationRequest> request =
      chat ? ParseChatRequest(body) : ParseCompletionRequest(body);
  if (!request.ok()) return request.status();
  return PrepareRequest(ctx, headers, *std::move(call), *std::move(request));
}

int RetryAfterSeconds(const ServeContext& ctx, UserId user, const absl::Status& refusal) {
  if (!absl::StrContains(refusal.message(), "token quota")) return 1;
  const UserConfig& member = ctx.household->members[user.value()];
  const double window = absl::ToDoubleSeconds(member.quota_window);
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  // Windows are aligned to the Unix epoch (UserConfig::quota_window).
  return std::max(1, static_cast<int>(std::ceil(window - std::fmod(now, window))));
}

}  // namespace hearth::serve

// File: examples/serve/src/prepare_generation.h
//
// From an HTTP call to a GenerationJob: who is calling (the key), what was
// asked (the body), which work class (key default, model alias,
// X-Hearth-Class), which workflow (X-Hearth-Parent), the prompt rendered
// with the model's chat template and tokenized, and max_tokens checked
// against the context. Errors carry the status code the HTTP answer uses
// (see openai_response.h: 400, 401, 404, 413, 504).
//
// Cheapest first, so that a member's large or hopeless prompt costs little
// and never delays another member: the key (headers only); the member's
// turn (member_turns.h: at most a few of one member's calls are parsed and
// tokenized at once, the rest wait behind their own); the body parsed;
// a prompt whose bytes alone cannot fit the context refused before any
// tokenising (prompt_bound.h; a chat once templated); tokenisation on the
// interactive job queue, stopping its count past what fits.
//
// Thread-safety: any thread (reads only shared immutable state).

#ifndef HEARTH_SERVE_PREPARE_GENERATION_H_
#define HEARTH_SERVE_PREPARE_GENERATION_H_

#include <string>
#include <string_view>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "member_turns.h"
#include "openai_request.h"
#include "household_directory.h"
#include "serve_context.h"
#include "serve_engine.h"

namespace hearth::serve {

// The request headers that matter here (empty when absent).
struct CallHeaders {
  std::string authorization;
  std::string api_key;
  std::string hearth_class;
  // The id of the request whose answer triggered this call, as its client
  // was shown it (public_request_ids.h): "chatcmpl-<id>", "cmpl-<id>" or
  // "<id>".
  std::string hearth_parent;
};

struct PreparedGeneration {
  GenerationRequest request;
  GenerationJob job;
  std::string member;
};

// A call past its first, cheapest checks: whose key it is, and one of that
// member's turns (member_turns.h), held until the prompt is tokenized.
struct AdmittedCall {
  Caller caller;
  MemberTurns::Turn turn;
};

// The key (Unauthenticated: 401), then the member's turn (DeadlineExceeded:
// 504). The body is parsed after this, in the turn.
absl::StatusOr<AdmittedCall> AdmitCall(const ServeContext& ctx, const CallHeaders& headers);

// A parsed `request` of an admitted `call` made a job: its class (model
// alias, X-Hearth-Class, the key's rights), its parent, the prompt's byte
// bound, the prompt templated and tokenized in the call's turn, max_tokens
// against the context.
absl::StatusOr<PreparedGeneration> PrepareRequest(const ServeContext& ctx,
                                                  const CallHeaders& headers, AdmittedCall call,
                                                  GenerationRequest request);

// AdmitCall, the body parsed as OpenAI's chat or completion request, then
// PrepareRequest.
absl::StatusOr<PreparedGeneration> PrepareGeneration(const ServeContext& ctx,
                                                     const CallHeaders& headers,
                                                     absl::string_view body, bool chat);

// Seconds a member refused with `refusal` (ResourceExhausted from Submit)
// should wait: to its next quota window when the quota refused it, else 1.
// (The Retry-After header caps it: openai_response.h.)
int RetryAfterSeconds(const ServeContext& ctx, UserId user, const absl::Status& refusal);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_PREPARE_GENERATION_H_

// File: examples/serve/src/openai_request.h
//
// Parses and validates the bodies of OpenAI's /v1/chat/completions and
// /v1/completions into one `GenerationRequest`. The sampling fields below
// are honoured, and so are logprobs (logprobs_field.h), logit_bias
// (logit_bias_field.h), grammar, response_format and json_schema
// (grammar_field.h), and n (choices sampled from one prompt: Hearth's parallel
// samples); a field the server does not implement (tools, best_of, ...:
// unsupported_fields.h) is accepted only at its neutral value and is
// InvalidArgument otherwise, and a field neither read nor listed there is
// InvalidArgument too, so a client is never silently given something else
// than it asked for.
//
// Every error names the field and what is allowed. Never throws.
//
// Example:
//   absl::StatusOr<GenerationRequest> r = ParseChatRequest(R"({"model": "m",
//       "messages": [{"role": "user", "content": "hi"}], "stream": true})");

#ifndef HEARTH_SERVE_OPENAI_REQUEST_H_
#define HEARTH_SERVE_OPENAI_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"

namespace hearth::serve {

struct ChatMessage {
  std::string role;
  std::string content;
};

// The window llama-server also uses by default: the penalties below look at
// the answer's last this many tokens.
inline constexpr int32_t kPenaltyLastN = 64;

// One logit_bias entry: added to `token`'s logit before any sampling.
struct TokenBias {
  int32_t token = 0;
  // In [-100, 100]; -100 bans the token (its logit becomes -inf).
  float bias = 0;
};

// Each default changes nothing; token_sampler.h applies them in llama.cpp's
// order (logit bias and grammar, penalties, top-k, top-p, min-p,
// temperature).
struct SamplingParams {
  // 0 is greedy. In [0, 2].
  double temperature = 1.0;
  // Nucleus mass kept. In (0, 1].
  double top_p = 1.0;
  // The k likeliest tokens kept; 0 keeps all. In [0, 2^20].
  int32_t top_k = 0;
  // Tokens below min_p times the likeliest one's probability dropped. In [0, 1].
  double min_p = 0.0;
  // llama.cpp's repetition penalty over the last kPenaltyLastN tokens: a
  // repeated token's logit divided by it (multiplied when negative). 1 is
  // none. In (0, 10].
  double repeat_penalty = 1.0;
  // OpenAI's: subtracted once from a token that occurred (presence), and
  // per occurrence (frequency), over the same window. In [-2, 2].
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  // Absent: a seed drawn per request.
  std::optional<uint32_t> seed;
  // At most kMaxLogitBiasEntries, ids distinct and >= 0 (checked against
  // the vocabulary by CheckLogitBiasTokens, logit_bias_field.h).
  std::vector<TokenBias> logit_bias;
};

// Limits on what a body may hold; beyond them the request is InvalidArgument.
inline constexpr size_t kMaxMessages = 1024;
inline constexpr size_t kMaxStopStrings = 4;
inline constexpr size_t kMaxStopBytes = 256;
// Choices one request may ask for (`n`): each takes a sequence of the
// context's, so a few at most.
inline constexpr int32_t kMaxChoices = 8;

struct GenerationRequest {
  bool chat = false;
  std::string model;
  // Chat: the conversation. Completions: empty.
  std::vector<ChatMessage> messages;
  // Completions: the prompt. Chat: empty.
  std::string prompt;
  // Absent: the server's default, clipped to the context left.
  std::optional<int32_t> max_tokens;
  // Without max_tokens: as many tokens as the context leaves instead of
  // the server's default (Ollama's num_predict -1 and -2).
  bool until_context = false;
  std::vector<std::string> stop;
  bool stream = false;
  // Choices (`n`), sampled from one computed prompt; choice k's sampler is
  // seeded with `seed` + k when a seed is given. In [1, kMaxChoices].
  int32_t n = 1;
  // stream_options.include_usage: a last chunk carrying `usage`.
  bool include_usage = false;
  SamplingParams sampling;
  // Log probabilities asked for: absent, none; else how many alternatives
  // each token lists (chat top_logprobs in [0, 20], completions logprobs
  // in [0, 5]).
  std::optional<int32_t> logprobs;
  // A GBNF grammar the answer must follow ("": none), from `grammar` or
  // response_format json_object; `grammar_field` names which, for errors.
  std::string grammar;
  std::string grammar_field;
  // Or a JSON schema it must follow, as JSON text ("": none), from
  // response_format json_schema, `json_schema` or Ollama's `format`
  // (grammar_field.h), named by `grammar_field`; it becomes `grammar` in
  // the member's turn (schema_grammar.h).
  std::string json_schema;
};

absl::StatusOr<GenerationRequest> ParseChatRequest(absl::string_view body);
absl::StatusOr<GenerationRequest> ParseCompletionRequest(absl::string_view body);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_OPENAI_REQUEST_H_

// File: examples/serve/src/token_sampler.h
//
// `TokenSampler` picks a request's next token from its logits row through
// llama.cpp's sampler API, in two chains per request. The constraints come
// first: logit_bias (llama_sampler_init_logit_bias; -100 bans a token,
// its logit made -inf) and the request's grammar (a clone of the one
// grammar_sampler.h compiled). If they leave no token, Sample says so
// rather than draw from nothing. Then the sampling chain: the penalties on
// the answer's recent tokens (repeat, presence, frequency), then greedy at
// temperature 0, otherwise top-k, top-p, min-p, temperature and a seeded
// draw (llama_sampler_init_dist), so the same seed and logits give the same
// tokens. Samplers whose parameter is neutral are left out of the chains.
// This is llama-server's order (its grammar is applied before its chain
// when a token would break it).
//
// Thread-safety: one thread at a time (the engine thread).
//
// Example:
//   TokenSampler sampler(params, /*grammar=*/nullptr, /*seed=*/7, /*n_vocab=*/258);
//   int32_t token = sampler.Sample(logits, scratch);  // kNoAllowedToken: none left

#ifndef HEARTH_SERVE_TOKEN_SAMPLER_H_
#define HEARTH_SERVE_TOKEN_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "llama.h"
#include "openai_request.h"

namespace hearth::serve {

// What Sample returns when the logit bias and the grammar ban every token.
inline constexpr int32_t kNoAllowedToken = -1;

class TokenSampler {
 public:
  // `seed` is used when params.seed is absent. `grammar` (not owned; may be
  // null) is cloned, so one compiled grammar serves any number of
  // requests. REQUIRES: params within the ranges openai_request.h
  // documents, logit_bias ids in [0, n_vocab); n_vocab the model's.
  TokenSampler(const SamplingParams& params, const llama_sampler* grammar, uint32_t seed,
               int32_t n_vocab);
  ~TokenSampler();
  TokenSampler(const TokenSampler&) = delete;
  TokenSampler& operator=(const TokenSampler&) = delete;

  // The next token, or kNoAllowedToken (nothing is then accepted: the
  // request should end). REQUIRES: logits is not empty. `scratch` is the
  // caller's buffer, reused across calls so that sampling does not
  // allocate per token.
  int32_t Sample(absl::Span<const float> logits, std::vector<llama_token_data>& scratch);

 private:
  // Null when the request has neither logit bias nor grammar.
  llama_sampler* constraints_ = nullptr;
  llama_sampler* chain_;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_TOKEN_SAMPLER_H_

// File: examples/serve/src/token_sampler.h
//
// `TokenSampler` picks a request's next token from its logits row through
// llama.cpp's sampler API, one chain per request: the penalties on the
// answer's recent tokens (repeat, presence, frequency), then greedy at
// temperature 0, otherwise top-k, top-p, min-p, temperature and a seeded
// draw (llama_sampler_init_dist), so the same seed and logits give the same
// tokens. Samplers whose parameter is neutral are left out of the chain.
//
// Thread-safety: one thread at a time (the engine thread).
//
// Example:
//   TokenSampler sampler(params, /*seed=*/7, /*n_vocab=*/258);
//   int32_t token = sampler.Sample(logits);

#ifndef HEARTH_SERVE_TOKEN_SAMPLER_H_
#define HEARTH_SERVE_TOKEN_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "llama.h"
#include "openai_request.h"

namespace hearth::serve {

class TokenSampler {
 public:
  // `seed` is used when params.seed is absent. REQUIRES: params within the
  // ranges openai_request.h documents; n_vocab the model's.
  TokenSampler(const SamplingParams& params, uint32_t seed, int32_t n_vocab);
  ~TokenSampler();
  TokenSampler(const TokenSampler&) = delete;
  TokenSampler& operator=(const TokenSampler&) = delete;

  // REQUIRES: logits is not empty. `scratch` is the caller's buffer, reused
  // across calls so that sampling does not allocate per token.
  int32_t Sample(absl::Span<const float> logits, std::vector<llama_token_data>& scratch);

 private:
  llama_sampler* chain_;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_TOKEN_SAMPLER_H_

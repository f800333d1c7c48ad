// File: examples/serve/src/token_sampler.h
//
// `TokenSampler` picks a request's next token from its logits row through
// llama.cpp's sampler API: greedy at temperature 0, otherwise top-p, then
// temperature, then a seeded draw (llama_sampler_init_dist), so the same
// seed and logits give the same tokens.
//
// Thread-safety: one thread at a time (the engine thread).
//
// Example:
//   TokenSampler sampler(params, /*n_vocab=*/258);
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
  // `seed` is used when params.seed is absent.
  TokenSampler(const SamplingParams& params, uint32_t seed);
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

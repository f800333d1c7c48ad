#include "token_sampler.h"

#include <algorithm>
#include <cmath>

namespace hearth::serve {
namespace {

// llama.cpp's logit-bias sampler adds the bias; OpenAI's -100 means "never".
llama_sampler* LogitBiasSampler(const std::vector<TokenBias>& bias, int32_t n_vocab) {
  std::vector<llama_logit_bias> entries;
  entries.reserve(bias.size());
  for (const TokenBias& b : bias) {
    entries.push_back({b.token, b.bias <= -100 ? -INFINITY : b.bias});
  }
  return llama_sampler_init_logit_bias(n_vocab, static_cast<int32_t>(entries.size()),
                                       entries.data());
}

bool AnyAllowed(const llama_token_data_array& candidates) {
  return std::any_of(candidates.data, candidates.data + candidates.size,
                     [](const llama_token_data& d) { return d.logit > -INFINITY; });
}

}  // namespace

TokenSampler::TokenSampler(const SamplingParams& params, const llama_sampler* grammar,
                           uint32_t seed, int32_t n_vocab)
    : chain_(llama_sampler_chain_init(llama_sampler_chain_default_params())) {
  if (!params.logit_bias.empty() || grammar != nullptr) {
    constraints_ = llama_sampler_chain_init(llama_sampler_chain_default_params());
    if (!params.logit_bias.empty()) {
      llama_sampler_chain_add(constraints_, LogitBiasSampler(params.logit_bias, n_vocab));
    }
    if (grammar != nullptr) llama_sampler_chain_add(constraints_, llama_sampler_clone(grammar));
  }
  // Penalties come first in greedy decoding too, as in llama-server: they
  // are how a client stops a greedy answer from looping.
  if (params.repeat_penalty != 1 || params.presence_penalty != 0 ||
      params.frequency_penalty != 0) {
    llama_sampler_chain_add(
        chain_, llama_sampler_init_penalties(n_vocab, kPenaltyLastN,
                                             static_cast<float>(params.repeat_penalty),
                                             static_cast<float>(params.frequency_penalty),
                                             static_cast<float>(params.presence_penalty)));
  }
  if (params.temperature <= 0) {
    llama_sampler_chain_add(chain_, llama_sampler_init_greedy());
    return;
  }
  if (params.top_k > 0) llama_sampler_chain_add(chain_, llama_sampler_init_top_k(params.top_k));
  if (params.top_p < 1) {
    llama_sampler_chain_add(chain_, llama_sampler_init_top_p(static_cast<float>(params.top_p), 1));
  }
  if (params.min_p > 0) {
    llama_sampler_chain_add(chain_, llama_sampler_init_min_p(static_cast<float>(params.min_p), 1));
  }
  llama_sampler_chain_add(chain_, llama_sampler_init_temp(static_cast<float>(params.temperature)));
  llama_sampler_chain_add(chain_, llama_sampler_init_dist(params.seed.value_or(seed)));
}

TokenSampler::~TokenSampler() {
  if (constraints_ != nullptr) llama_sampler_free(constraints_);
  llama_sampler_free(chain_);
}

int32_t TokenSampler::Sample(absl::Span<const float> logits,
                             std::vector<llama_token_data>& scratch) {
  scratch.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    scratch[i] = llama_token_data{static_cast<llama_token>(i), logits[i], 0.0f};
  }
  llama_token_data_array candidates{scratch.data(), scratch.size(), /*selected=*/-1,
                                    /*sorted=*/false};
  if (constraints_ != nullptr) {
    llama_sampler_apply(constraints_, &candidates);
    // Drawing from all -inf is undefined, and a grammar must never accept
    // a token it rejects (llama.cpp aborts).
    if (!AnyAllowed(candidates)) return kNoAllowedToken;
  }
  llama_sampler_apply(chain_, &candidates);
  const int64_t picked = candidates.selected >= 0 && static_cast<size_t>(candidates.selected) <
                                                         candidates.size
                             ? candidates.selected
                             : 0;
  const int32_t token = candidates.data[picked].id;
  if (constraints_ != nullptr) {
    // A banned or ungrammatical token cannot be picked while another is
    // allowed; checked anyway, since accepting one would abort.
    if (!(candidates.data[picked].logit > -INFINITY)) return kNoAllowedToken;
    llama_sampler_accept(constraints_, token);
  }
  llama_sampler_accept(chain_, token);
  return token;
}

}  // namespace hearth::serve

#include "token_sampler.h"

namespace hearth::serve {

TokenSampler::TokenSampler(const SamplingParams& params, uint32_t seed, int32_t n_vocab)
    : chain_(llama_sampler_chain_init(llama_sampler_chain_default_params())) {
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

TokenSampler::~TokenSampler() { llama_sampler_free(chain_); }

int32_t TokenSampler::Sample(absl::Span<const float> logits,
                             std::vector<llama_token_data>& scratch) {
  scratch.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    scratch[i] = llama_token_data{static_cast<llama_token>(i), logits[i], 0.0f};
  }
  llama_token_data_array candidates{scratch.data(), scratch.size(), /*selected=*/-1,
                                    /*sorted=*/false};
  llama_sampler_apply(chain_, &candidates);
  const int64_t picked = candidates.selected >= 0 ? candidates.selected : 0;
  const int32_t token = candidates.data[picked].id;
  llama_sampler_accept(chain_, token);
  return token;
}

}  // namespace hearth::serve

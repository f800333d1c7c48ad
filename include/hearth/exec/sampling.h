// File: hearth/exec/sampling.h
//
// Seeded sampling that depends on nothing but the logits, the request's
// parameters and the position: the token at position p is drawn from
// softmax(logits / temperature) with a uniform number that is a fixed
// function of (seed, p). A request's tokens are then the same however it is
// batched, chunked, preempted, swapped or speculated, and a parallel
// sample's (RequestSpec::num_samples) equal its seed's run alone. The CPU
// reference executor and the llama.cpp engine sample this way.
//
// Example:
//   const std::vector<float> logits = {0.1f, 2.0f, 0.3f};  // one per token id
//   const hearth::SamplingParams params{.temperature = 0.8f, .seed = 42};
//   hearth::TokenId t = hearth::SampleToken(logits, params, /*position=*/7);

#ifndef HEARTH_EXEC_SAMPLING_H_
#define HEARTH_EXEC_SAMPLING_H_

#include <cstdint>

#include "absl/types/span.h"
#include "hearth/common/ids.h"

namespace hearth {

// How one request's tokens are sampled. Temperature 0 is greedy (argmax,
// lowest id on ties).
struct SamplingParams {
  // >= 0; 0: greedy. NaN or negative is taken as 0.
  float temperature = 0.0f;
  uint64_t seed = 0;
};

// The token `params` picks from `logits` (one value per vocabulary id, not
// empty) for position `position`. Pure; any thread.
TokenId SampleToken(absl::Span<const float> logits, const SamplingParams& params,
                    int32_t position);

}  // namespace hearth

#endif  // HEARTH_EXEC_SAMPLING_H_

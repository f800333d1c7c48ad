#include "hearth/exec/sampling.h"

#include <algorithm>
#include <cmath>

namespace hearth {
namespace {

// The uniform draw in [0, 1) for `position` under `seed` (splitmix64).
double UniformAt(uint64_t seed, int32_t position) {
  uint64_t x = seed + 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(position) + 1);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

}  // namespace

TokenId SampleToken(absl::Span<const float> logits, const SamplingParams& params,
                    int32_t position) {
  const auto vocab = static_cast<int32_t>(logits.size());
  if (vocab == 0) return 0;
  // Greedy: the first of the largest (lowest id on ties).
  const auto greedy = [&] {
    return static_cast<TokenId>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  };
  if (!(params.temperature > 0.0f)) return greedy();
  const float max = *std::max_element(logits.begin(), logits.end());
  double total = 0.0;
  for (int32_t t = 0; t < vocab; ++t) {
    total += std::exp(static_cast<double>(logits[t] - max) / params.temperature);
  }
  const double target = UniformAt(params.seed, position) * total;
  double cumulative = 0.0;
  for (int32_t t = 0; t < vocab; ++t) {
    cumulative += std::exp(static_cast<double>(logits[t] - max) / params.temperature);
    if (cumulative > target) return t;
  }
  return vocab - 1;
}

}  // namespace hearth

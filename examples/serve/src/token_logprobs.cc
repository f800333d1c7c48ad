#include "token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hearth::serve {
namespace {

float Finite(float logit) { return std::isfinite(logit) ? logit : -INFINITY; }

}  // namespace

void LogprobsAt(absl::Span<const float> logits, int32_t token, int32_t top_n,
                std::vector<int32_t>& scratch, LogprobIds& out) {
  float max = -INFINITY;
  for (float l : logits) max = std::max(max, Finite(l));
  // log-sum-exp shifted by the largest logit, in double: 1e5 terms.
  double sum = 0;
  if (max > -INFINITY) {
    for (float l : logits) sum += std::exp(static_cast<double>(Finite(l)) - max);
  }
  const double log_norm = max > -INFINITY ? max + std::log(sum) : 0;
  auto logprob = [&](int32_t id) {
    const float l = Finite(logits[id]);
    if (!(l > -INFINITY) || !(max > -INFINITY)) return kLogprobFloor;
    return static_cast<float>(std::clamp<double>(l - log_norm, kLogprobFloor, 0));
  };
  out.token = token;
  out.logprob = logprob(token);
  out.top.clear();
  const size_t n = std::min<size_t>(static_cast<size_t>(top_n), logits.size());
  if (n == 0) return;
  scratch.resize(logits.size());
  std::iota(scratch.begin(), scratch.end(), 0);
  std::partial_sort(scratch.begin(), scratch.begin() + n, scratch.end(),
                    [&](int32_t a, int32_t b) {
                      const float la = Finite(logits[a]);
                      const float lb = Finite(logits[b]);
                      return la > lb || (la == lb && a < b);
                    });
  for (size_t i = 0; i < n; ++i) out.top.emplace_back(scratch[i], logprob(scratch[i]));
}

}  // namespace hearth::serve

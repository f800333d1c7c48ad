// File: src/scheduler/step_budget.cc

#include "scheduler/step_budget.h"

#include <algorithm>
#include <cmath>

namespace hearth::internal {
namespace {

// Each step's weight decays by this per later step: the fit spans the last
// few thousand steps, long enough to see both decode-only and prefill-heavy
// steps, short enough to follow a model swap.
constexpr double kDecay = 0.999;
// Token counts must vary this much (standard deviation) before a slope is
// trusted: decode-only steps alone say nothing about prefill cost.
constexpr double kMinTokenSpread = 32;

}  // namespace

void StepBudget::Observe(int32_t tokens, absl::Duration took) {
  if (host_.per_token > absl::ZeroDuration() || tokens <= 0 || took <= absl::ZeroDuration()) {
    return;
  }
  const double x = tokens, y = absl::ToDoubleSeconds(took);
  w_ = w_ * kDecay + 1;
  x_ = x_ * kDecay + x;
  y_ = y_ * kDecay + y;
  xx_ = xx_ * kDecay + x * x;
  xy_ = xy_ * kDecay + x * y;
}

bool StepBudget::Line(double* fixed_s, double* per_token_s) const {
  if (host_.per_token > absl::ZeroDuration()) {
    *fixed_s = absl::ToDoubleSeconds(host_.fixed);
    *per_token_s = absl::ToDoubleSeconds(host_.per_token);
    return true;
  }
  if (w_ < 2) return false;
  const double mx = x_ / w_, my = y_ / w_;
  const double var = xx_ / w_ - mx * mx;
  if (!(var >= kMinTokenSpread * kMinTokenSpread)) return false;
  const double slope = (xy_ / w_ - mx * my) / var;
  if (!(slope > 0) || !std::isfinite(slope)) return false;
  *per_token_s = slope;
  *fixed_s = std::max(0.0, my - slope * mx);
  return true;
}

int32_t StepBudget::TokensFor(absl::Duration allowance, int32_t max_tokens,
                              int32_t floor_tokens) const {
  if (allowance == absl::InfiniteDuration()) return max_tokens;
  double fixed = 0, per_token = 0;
  if (!Line(&fixed, &per_token)) return max_tokens;
  const double fits = (absl::ToDoubleSeconds(allowance) - fixed) / per_token;
  const double capped = std::min<double>(max_tokens, std::max<double>(floor_tokens, fits));
  return static_cast<int32_t>(std::max(1.0, std::floor(capped)));
}

}  // namespace hearth::internal

#include "hearth/metrics/fairness.h"

#include <algorithm>

namespace hearth {

double JainIndex(absl::Span<const double> values) {
  double sum = 0;
  double sum_sq = 0;
  for (double v : values) {
    sum += v;
    sum_sq += v * v;
  }
  if (values.empty() || sum_sq == 0) return 1.0;
  return sum * sum / (static_cast<double>(values.size()) * sum_sq);
}

ServiceGapTracker::ServiceGapTracker(int num_users)
    : num_users_(std::max(num_users, 0)),
      pairs_(static_cast<size_t>(num_users_) * (num_users_ > 0 ? num_users_ - 1 : 0) / 2) {}

void ServiceGapTracker::Update(absl::Span<const double> service,
                               absl::Span<const bool> backlogged) {
  if (service.size() < static_cast<size_t>(num_users_) ||
      backlogged.size() < static_cast<size_t>(num_users_)) {
    return;
  }
  size_t k = 0;
  for (int f = 0; f < num_users_; ++f) {
    for (int g = f + 1; g < num_users_; ++g, ++k) {
      PairState& p = pairs_[k];
      if (!backlogged[f] || !backlogged[g]) {
        p.in_period = false;
        continue;
      }
      const double d = service[f] - service[g];
      if (!p.in_period) {
        p.in_period = true;
        p.min_d = p.max_d = d;
        continue;
      }
      p.min_d = std::min(p.min_d, d);
      p.max_d = std::max(p.max_d, d);
      max_gap_ = std::max(max_gap_, p.max_d - p.min_d);
    }
  }
}

}  // namespace hearth

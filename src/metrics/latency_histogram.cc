#include "hearth/metrics/latency_histogram.h"

#include <algorithm>

namespace hearth {

void LatencyHistogram::Observe(double seconds) {
  // `!(x > 0)` also catches NaN, which would poison the sum forever.
  const double v = seconds > 0 ? seconds : 0.0;
  const size_t i = static_cast<size_t>(
      std::lower_bound(kBounds.begin(), kBounds.end(), v) - kBounds.begin());
  ++counts_[i];
  ++count_;
  sum_ += v;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
}

uint64_t LatencyHistogram::CumulativeCount(size_t i) const {
  uint64_t n = 0;
  for (size_t b = 0; b <= i && b < counts_.size(); ++b) n += counts_[b];
  return n;
}

void LatencyHistograms::Merge(const LatencyHistograms& other) {
  queue_wait.Merge(other.queue_wait);
  ttft.Merge(other.ttft);
  itl.Merge(other.itl);
  e2e.Merge(other.e2e);
}

}  // namespace hearth

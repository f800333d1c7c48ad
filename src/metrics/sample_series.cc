#include "hearth/metrics/sample_series.h"

#include <algorithm>
#include <cmath>

namespace hearth {
namespace {

constexpr size_t kDefaultCapacity = size_t{1} << 20;

// SplitMix64: tiny, fast and fully specified, so reservoir choices are the
// same on every platform and standard library.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

SampleSeries::SampleSeries(size_t capacity, uint64_t seed)
    : capacity_(capacity == 0 ? kDefaultCapacity : capacity),
      rng_state_(seed) {}

void SampleSeries::Add(double value) {
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  sum_ += value;
  if (samples_.size() < capacity_) {
    samples_.push_back(value);
    sorted_ = false;
    if (samples_.size() == capacity_) ScheduleNextReplacement();
    return;
  }
  // Reservoir sampling, Li's algorithm L: the same distribution as algorithm
  // R (each sample kept with probability capacity / count) but it draws the
  // gap to the next kept sample, so most calls only compare a counter.
  if (count_ - 1 < next_replacement_) return;
  samples_[NextRandom(rng_state_) % capacity_] = value;
  sorted_ = false;
  ScheduleNextReplacement();
}

void SampleSeries::ScheduleNextReplacement() {
  const double k = static_cast<double>(capacity_);
  if (w_ == 0) w_ = std::exp(std::log(Uniform()) / k);
  else w_ *= std::exp(std::log(Uniform()) / k);
  const double skip = std::floor(std::log(Uniform()) / std::log1p(-w_));
  next_replacement_ = count_ + static_cast<uint64_t>(std::min(skip, 1e18));
}

double SampleSeries::Uniform() {
  return (static_cast<double>(NextRandom(rng_state_) >> 11) + 0.5) * 0x1.0p-53;
}

absl::Span<const double> SampleSeries::Sorted() const {
  if (!sorted_) {
    std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
  }
  return samples_;
}

double SampleSeries::Percentile(double p) const {
  absl::Span<const double> s = Sorted();
  if (s.empty()) return 0.0;
  if (p <= 0) return s.front();
  if (p >= 100) return s.back();
  const double rank = std::ceil(p / 100.0 * static_cast<double>(s.size()));
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return s[std::min(index, s.size() - 1)];
}

DistributionSummary SampleSeries::Summarize() const {
  DistributionSummary d;
  d.count = count_;
  if (count_ == 0) return d;
  d.mean = mean();
  d.max = max_;  // exact even when sampled
  if (sorted_) {
    d.p50 = Percentile(50);
    d.p90 = Percentile(90);
    d.p99 = Percentile(99);
    return d;
  }
  // Selection instead of a full sort: O(n) per rank, on successively
  // narrower ranges (the kept samples' order carries no meaning).
  const size_t n = samples_.size();
  auto rank = [n](double p) {
    const double r = std::ceil(p / 100.0 * static_cast<double>(n));
    return std::min(n - 1, r < 1 ? size_t{0} : static_cast<size_t>(r) - 1);
  };
  double* out[] = {&d.p50, &d.p90, &d.p99};
  const double ps[] = {50, 90, 99};
  auto from = samples_.begin();
  for (int i = 0; i < 3; ++i) {
    auto nth = samples_.begin() + static_cast<std::ptrdiff_t>(rank(ps[i]));
    if (nth >= from) {
      std::nth_element(from, nth, samples_.end());
      from = nth;
    }
    *out[i] = *nth;
  }
  return d;
}

}  // namespace hearth

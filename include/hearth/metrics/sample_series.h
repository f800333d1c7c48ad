// File: hearth/metrics/sample_series.h
//
// `SampleSeries` collects one latency (or any non-negative quantity) sample
// stream and answers count, mean, min, max and percentiles. It keeps every
// sample exactly until `capacity` samples have been added, and a uniform
// reservoir sample of that size afterwards (Li's algorithm L with a seeded
// generator, so the result is deterministic). Count, sum, mean, min and max are
// always exact; percentiles are exact below the capacity.
//
// Percentiles use the nearest-rank definition: P(p) is the smallest sample
// such that at least p% of samples are <= it, i.e. sorted[ceil(p/100*n) - 1].
// That makes hand-checked test numbers easy: P50 of {1,2,3,4} is 2.
//
// Thread-safety: none. Percentile() sorts lazily and caches the order.
//
// Example:
//   hearth::SampleSeries s;
//   s.Add(0.010); s.Add(0.030);
//   hearth::DistributionSummary d = s.Summarize();   // d.p50 == 0.010

#ifndef HEARTH_METRICS_SAMPLE_SERIES_H_
#define HEARTH_METRICS_SAMPLE_SERIES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace hearth {

// Count, mean, nearest-rank percentiles and maximum of a series. All zero for
// an empty series.
struct DistributionSummary {
  uint64_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

class SampleSeries {
 public:
  // `capacity` of 0 means the default (2^20 samples, 8 MiB).
  explicit SampleSeries(size_t capacity = 0, uint64_t seed = 1);

  void Add(double value);

  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double mean() const { return count_ == 0 ? 0.0 : sum_ / count_; }
  double min() const { return count_ == 0 ? 0.0 : min_; }
  double max() const { return count_ == 0 ? 0.0 : max_; }
  // True once samples beyond `capacity` were dropped into the reservoir.
  bool sampled() const { return count_ > samples_.size(); }

  // Nearest-rank percentile for p in [0, 100]; 0 for an empty series. p <= 0
  // gives the minimum kept sample, p >= 100 the maximum.
  double Percentile(double p) const;
  DistributionSummary Summarize() const;
  // The kept samples in ascending order.
  absl::Span<const double> Sorted() const;

 private:
  void ScheduleNextReplacement();
  double Uniform();

  size_t capacity_;
  uint64_t rng_state_;
  // Algorithm L state: the running weight and the count (0-based index of
  // the sample) at which the next replacement happens.
  double w_ = 0;
  uint64_t next_replacement_ = 0;
  uint64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
  mutable std::vector<double> samples_;
  mutable bool sorted_ = true;
};

}  // namespace hearth

#endif  // HEARTH_METRICS_SAMPLE_SERIES_H_

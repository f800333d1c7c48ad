// File: hearth/metrics/latency_histogram.h
//
// `LatencyHistogram` counts latency observations (seconds) into fixed buckets,
// the form Prometheus histograms and `histogram_quantile()` expect. Unlike a
// SampleSeries it keeps no samples: an observation is a binary search over the
// bounds and two additions, with no allocation ever, and two histograms of the
// same kind add up exactly (so per-class series sum to the whole).
//
// Buckets (upper bounds, seconds; one set for queue wait, TTFT, inter-token
// latency and end-to-end latency, so dashboards compare them directly):
//   0.001 0.0025 0.005 0.01 0.02 0.04 0.06 0.08 0.1 0.15 0.2 0.3 0.4 0.5
//   0.75 1 1.5 2 2.5 5 7.5 10 15 20 30 60 120 300, then +Inf.
// The low end resolves inter-token gaps of small models on fast GPUs (a few
// ms); the dense middle covers interactive TTFT and decode steps (20 ms to
// 2.5 s, where SLOs sit); the tail reaches the minutes that long generations
// and queue waits under a backlog take. Similar in spirit to vLLM's buckets
// (TTFT from 1 ms, request latencies to minutes), not a copy of them.
//
// An observation v lands in the first bucket whose bound is >= v (Prometheus'
// `le`); NaN and negative values count as 0.
//
// Thread-safety: none (a value type).
//
// Example:
//   hearth::LatencyHistogram h;
//   h.Observe(0.030);
//   h.Observe(0.9);
//   uint64_t fast = h.CumulativeCount(5);   // <= kBounds[5] (0.04 s): 1

#ifndef HEARTH_METRICS_LATENCY_HISTOGRAM_H_
#define HEARTH_METRICS_LATENCY_HISTOGRAM_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace hearth {

class LatencyHistogram {
 public:
  // Finite upper bounds in seconds, ascending; bucket kNumBounds is +Inf.
  static constexpr size_t kNumBounds = 28;
  static constexpr std::array<double, kNumBounds> kBounds = {
      0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15,
      0.2,   0.3,    0.4,   0.5,  0.75, 1.0,  1.5,  2.0,  2.5, 5.0,
      7.5,   10.0,   15.0,  20.0, 30.0, 60.0, 120.0, 300.0};

  // O(log buckets), allocation-free.
  void Observe(double seconds);
  // Adds `other`'s observations (both have the same buckets).
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  // Observations in bucket `i` alone; i in [0, kNumBounds], kNumBounds being
  // the +Inf bucket.
  uint64_t BucketCount(size_t i) const { return counts_[i]; }
  // Observations <= kBounds[i] (Prometheus' cumulative `le` count); i ==
  // kNumBounds gives count().
  uint64_t CumulativeCount(size_t i) const;

 private:
  std::array<uint64_t, kNumBounds + 1> counts_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

// The four bucketed latencies of one group, in seconds: queue_wait (arrival
// to first admission), ttft (arrival to first token), itl (each gap between
// consecutive tokens of a request), e2e (arrival to last token, finished
// requests only) -- the same definitions as GroupReport's summaries.
struct LatencyHistograms {
  LatencyHistogram queue_wait;
  LatencyHistogram ttft;
  LatencyHistogram itl;
  LatencyHistogram e2e;

  void Merge(const LatencyHistograms& other);
};

}  // namespace hearth

#endif  // HEARTH_METRICS_LATENCY_HISTOGRAM_H_

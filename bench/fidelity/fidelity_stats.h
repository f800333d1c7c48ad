// File: bench/fidelity/fidelity_stats.h
//
// The arithmetic of the simulator-fidelity check (issue 16), kept apart from
// llama.cpp so it is tested on every machine: quantiles and relative-error
// summaries, the spread of repeated timings, the held-out split of a
// calibration grid, and the request-by-request comparison of a real run with
// its simulated replay. Nothing here times anything.
//
// Example:
//   std::vector<double> errors = RelativeErrors(predicted, measured);
//   ErrorSummary e = Summarize(errors);   // e.median, e.p90, e.max
//   if (e.median > 0.10) ...

#ifndef HEARTH_BENCH_FIDELITY_FIDELITY_STATS_H_
#define HEARTH_BENCH_FIDELITY_FIDELITY_STATS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hearth::fidelity {

// Quantile()
//
// The q-quantile (q in [0, 1]) of `values` by linear interpolation between
// order statistics (q = 0.5 is the usual median). 0 for an empty span.
double Quantile(absl::Span<const double> values, double q);

struct ErrorSummary {
  size_t count = 0;
  double median = 0;
  double p90 = 0;
  double mean = 0;
  double max = 0;
};

// Summarize()
//
// Median, 90th percentile, mean and maximum of `values` (all zero when empty).
ErrorSummary Summarize(absl::Span<const double> values);

// RelativeErrors()
//
// |predicted[i] - measured[i]| / measured[i]. InvalidArgument when the sizes
// differ or a measured value is not finite and > 0 (a relative error against
// zero means nothing).
absl::StatusOr<std::vector<double>> RelativeErrors(absl::Span<const double> predicted,
                                                   absl::Span<const double> measured);

// How much repeated timings of one thing disagree.
struct Spread {
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  // (p90 - p10) / median: 0.2 means the middle 80% of samples lie within a
  // band 20% of the median wide. 0 when the median is 0.
  double relative = 0;
};
Spread SpreadOf(absl::Span<const double> samples);

// IsHeldOut()
//
// Whether grid point `index` is held out of the fit: about a quarter of the
// indices, picked by a multiplicative hash so that every region of a grid
// listed in nested-loop order has some (same rule as bench/gpu).
bool IsHeldOut(size_t index);

// One request's latencies in one run, in seconds.
struct RequestLatency {
  // The request's position in the shared request list (pairs the two runs).
  int64_t index = 0;
  std::string work_class;
  double ttft = 0;
  double e2e = 0;
};

// The simulated run against the real one for one policy.
struct ReplayComparison {
  size_t requests = 0;
  ErrorSummary ttft;  // relative error of each request's TTFT
  ErrorSummary e2e;   // relative error of each request's end-to-end latency
};

// CompareRequests()
//
// Pairs requests by index. InvalidArgument when an index is missing from
// either run, appears twice, or a real latency is not > 0.
absl::StatusOr<ReplayComparison> CompareRequests(absl::Span<const RequestLatency> real,
                                                 absl::Span<const RequestLatency> simulated);

// ClassQuantile()
//
// The q-quantile of the TTFTs of requests of `work_class` (0 when none).
double ClassTtftQuantile(absl::Span<const RequestLatency> run, const std::string& work_class,
                         double q);

// Ordering of two policies on one figure where lower is better.
enum class Order { kFirstBetter, kSecondBetter, kTie };

// OrderOf()
//
// kTie when the two values differ by at most `tie_fraction` of the larger
// one, else which one is lower.
Order OrderOf(double first, double second, double tie_fraction);
const char* OrderName(Order order);

}  // namespace hearth::fidelity

#endif  // HEARTH_BENCH_FIDELITY_FIDELITY_STATS_H_

// File: bench/burst/duration_stats.h
//
// Nearest-rank percentiles of recorded durations (in nanoseconds).

#ifndef HEARTH_BENCH_BURST_DURATION_STATS_H_
#define HEARTH_BENCH_BURST_DURATION_STATS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace hearth::bench {

// The value at quantile `q` in [0, 1] of `sorted` (ascending); 0 when empty.
inline int64_t Percentile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_BURST_DURATION_STATS_H_

// File: src/policy/internal/repeated_add.h
//
// Adds a step to a counter `times` times, one addition at a time, for
// several counters at once. Service counters are charged one decode at a
// time so that a batched charge rounds exactly as the same decodes charged
// singly; but each addition then waits on the one before (a floating-point
// add's latency), and a 1,024-sequence step spends most of its policy time
// in those chains. Interleaving four counters' chains lets their additions
// overlap; every counter still sees its own additions in order, so the
// results are bit-for-bit those of the plain loops.

#ifndef HEARTH_SRC_POLICY_INTERNAL_REPEATED_ADD_H_
#define HEARTH_SRC_POLICY_INTERNAL_REPEATED_ADD_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "absl/types/span.h"

namespace hearth::policy_internal {

struct RepeatedAdd {
  double* counter = nullptr;
  double step = 0;
  int32_t times = 0;
};

// Adds each chain's `step` to `*counter` `times` times (times <= 0: none).
// The counters must be distinct. Chains go four at a time; a group of fewer
// leaves its idle lanes adding 0 to a sum that is never written back.
inline void AddRepeatedly(absl::Span<const RepeatedAdd> chains) {
  constexpr size_t kLanes = 4;
  for (size_t i = 0; i < chains.size(); i += kLanes) {
    const absl::Span<const RepeatedAdd> group = chains.subspan(i, kLanes);
    double sum[kLanes] = {}, step[kLanes] = {};
    int32_t common = std::numeric_limits<int32_t>::max();
    for (size_t j = 0; j < group.size(); ++j) {
      sum[j] = *group[j].counter;
      step[j] = group[j].step;
      common = std::min(common, std::max(0, group[j].times));
    }
    for (int32_t k = 0; k < common; ++k) {
      for (size_t j = 0; j < kLanes; ++j) sum[j] += step[j];
    }
    for (size_t j = 0; j < group.size(); ++j) {
      for (int32_t k = common; k < group[j].times; ++k) sum[j] += step[j];
      *group[j].counter = sum[j];
    }
  }
}

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_INTERNAL_REPEATED_ADD_H_

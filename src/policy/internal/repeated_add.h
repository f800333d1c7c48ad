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
#include <cstdint>

#include "absl/types/span.h"

namespace hearth::policy_internal {

struct RepeatedAdd {
  double* counter = nullptr;
  double step = 0;
  int32_t times = 0;
};

// Adds each chain's `step` to `*counter` `times` times (times <= 0: none).
// The counters must be distinct.
inline void AddRepeatedly(absl::Span<const RepeatedAdd> chains) {
  size_t i = 0;
  for (; i + 4 <= chains.size(); i += 4) {
    const RepeatedAdd* c = &chains[i];
    double a = *c[0].counter, b = *c[1].counter, x = *c[2].counter, y = *c[3].counter;
    const int32_t common = std::max(
        0, std::min(std::min(c[0].times, c[1].times), std::min(c[2].times, c[3].times)));
    for (int32_t k = 0; k < common; ++k) {
      a += c[0].step;
      b += c[1].step;
      x += c[2].step;
      y += c[3].step;
    }
    for (int32_t k = common; k < c[0].times; ++k) a += c[0].step;
    for (int32_t k = common; k < c[1].times; ++k) b += c[1].step;
    for (int32_t k = common; k < c[2].times; ++k) x += c[2].step;
    for (int32_t k = common; k < c[3].times; ++k) y += c[3].step;
    *c[0].counter = a;
    *c[1].counter = b;
    *c[2].counter = x;
    *c[3].counter = y;
  }
  if (i + 2 <= chains.size()) {
    const RepeatedAdd* c = &chains[i];
    double a = *c[0].counter, b = *c[1].counter;
    const int32_t common = std::max(0, std::min(c[0].times, c[1].times));
    for (int32_t k = 0; k < common; ++k) {
      a += c[0].step;
      b += c[1].step;
    }
    for (int32_t k = common; k < c[0].times; ++k) a += c[0].step;
    for (int32_t k = common; k < c[1].times; ++k) b += c[1].step;
    *c[0].counter = a;
    *c[1].counter = b;
    i += 2;
  }
  if (i < chains.size()) {
    double a = *chains[i].counter;
    for (int32_t k = 0; k < chains[i].times; ++k) a += chains[i].step;
    *chains[i].counter = a;
  }
}

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_INTERNAL_REPEATED_ADD_H_

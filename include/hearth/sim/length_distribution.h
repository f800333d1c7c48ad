// File: hearth/sim/length_distribution.h
//
// A token-length distribution for synthetic requests: fixed, uniform, or
// log-normal (the usual fit for prompt and output lengths), clamped to
// [min, max]. Sampling lives with the generators so that every draw comes
// from the simulation's own seeded generator.
//
// Example:
//   hearth::LengthDistribution prompt = hearth::LengthDistribution::LogNormal(
//       /*median=*/600, /*sigma=*/0.8, /*min=*/16, /*max=*/8000);

#ifndef HEARTH_SIM_LENGTH_DISTRIBUTION_H_
#define HEARTH_SIM_LENGTH_DISTRIBUTION_H_

#include <cstdint>

#include "absl/status/status.h"

namespace hearth {

struct LengthDistribution {
  enum class Kind { kFixed, kUniform, kLogNormal };
  Kind kind = Kind::kFixed;
  // kFixed: a = the value. kUniform: [a, b]. kLogNormal: median a, sigma b.
  double a = 1;
  double b = 0;
  int32_t min = 1;
  int32_t max = 1 << 20;

  static LengthDistribution Fixed(int32_t v) {
    return {Kind::kFixed, static_cast<double>(v), 0, v, v};
  }
  static LengthDistribution Uniform(int32_t lo, int32_t hi) {
    return {Kind::kUniform, static_cast<double>(lo), static_cast<double>(hi),
            lo, hi};
  }
  static LengthDistribution LogNormal(double median, double sigma, int32_t lo,
                                      int32_t hi) {
    return {Kind::kLogNormal, median, sigma, lo, hi};
  }
  // Mean of the clamped distribution is not closed-form for the log-normal;
  // this is the unclamped mean, for capacity estimates.
  double ApproximateMean() const;
};

// InvalidArgument naming `what` when the parameters are out of range
// (1 <= min <= max, a > 0, b >= 0, uniform a <= b).
absl::Status ValidateLengthDistribution(const LengthDistribution& d,
                                        const char* what);

}  // namespace hearth

#endif  // HEARTH_SIM_LENGTH_DISTRIBUTION_H_

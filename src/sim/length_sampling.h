// Draws from a LengthDistribution with the simulator's generator.

#ifndef HEARTH_SRC_SIM_LENGTH_SAMPLING_H_
#define HEARTH_SRC_SIM_LENGTH_SAMPLING_H_

#include <algorithm>
#include <cmath>

#include "hearth/sim/length_distribution.h"
#include "sim/sim_random.h"

namespace hearth::internal {

inline int32_t SampleLength(const LengthDistribution& d, SimRandom& rng) {
  double v = d.a;
  switch (d.kind) {
    case LengthDistribution::Kind::kFixed: break;
    case LengthDistribution::Kind::kUniform:
      v = static_cast<double>(rng.UniformInt(static_cast<int64_t>(d.a),
                                             static_cast<int64_t>(d.b)));
      break;
    case LengthDistribution::Kind::kLogNormal:
      v = std::round(rng.LogNormal(d.a, d.b));
      break;
  }
  return static_cast<int32_t>(std::clamp<double>(v, d.min, d.max));
}

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_LENGTH_SAMPLING_H_

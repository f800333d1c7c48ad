// A small, fully specified random source for workload generation. The
// standard library's distributions are implementation-defined, so the
// simulator uses its own on top of SplitMix64 to stay byte-identical across
// platforms for a given seed.

#ifndef HEARTH_SRC_SIM_SIM_RANDOM_H_
#define HEARTH_SRC_SIM_SIM_RANDOM_H_

#include <cmath>
#include <cstdint>

namespace hearth::internal {

class SimRandom {
 public:
  explicit SimRandom(uint64_t seed) : state_(seed ^ 0x5deece66dull) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1): never 0, so log() is safe.
  double Uniform() { return (static_cast<double>(Next() >> 11) + 0.5) * 0x1.0p-53; }
  // Uniform integer in [lo, hi].
  int64_t UniformInt(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Exponential(double mean) { return -mean * std::log(Uniform()); }
  // Box-Muller, one value per call (the pair's second half is discarded to
  // keep the state a single integer).
  double Normal() {
    return std::sqrt(-2.0 * std::log(Uniform())) *
           std::cos(6.283185307179586 * Uniform());
  }
  double LogNormal(double median, double sigma) {
    return median * std::exp(sigma * Normal());
  }
  // Marsaglia and Tsang (2000); shape < 1 via the boost X * U^(1/shape).
  double Gamma(double shape, double scale) {
    if (shape < 1) {
      return Gamma(shape + 1, scale) * std::pow(Uniform(), 1.0 / shape);
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = Normal();
      double v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = Uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) {
        return d * v * scale;
      }
    }
  }
  double Weibull(double shape, double scale) {
    return scale * std::pow(-std::log(Uniform()), 1.0 / shape);
  }
  bool Bernoulli(double p) { return Uniform() < p; }

 private:
  uint64_t state_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_SIM_RANDOM_H_

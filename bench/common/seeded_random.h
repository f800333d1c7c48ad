// File: bench/common/seeded_random.h
//
// A small seeded generator (SplitMix64) with the few draws the soak and
// burst programs need. The standard distributions are implementation-defined,
// so a program built on them would not replay the same run on another
// standard library; these draws are the same everywhere for the same seed.

#ifndef HEARTH_BENCH_COMMON_SEEDED_RANDOM_H_
#define HEARTH_BENCH_COMMON_SEEDED_RANDOM_H_

#include <cstdint>

namespace hearth::bench {

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // Uniform in [lo, hi]. The modulo bias is below 2^-40 for the ranges used.
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  bool Bernoulli(double p) { return Unit() < p; }

 private:
  uint64_t state_;
};

// A fixed mix of two values, for token ids derived from (request, position)
// without keeping any state.
inline uint64_t MixBits(uint64_t a, uint64_t b) {
  SeededRandom r(a * 0x9e3779b97f4a7c15ull ^ b);
  return r.Next();
}

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_COMMON_SEEDED_RANDOM_H_

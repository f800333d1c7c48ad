// AddRepeatedly interleaves counters' additions; each counter must still end
// bit-for-bit where its own one-at-a-time loop would, or batched decode
// charges would rank members differently from single charges.

#include "policy/internal/repeated_add.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

namespace hearth::policy_internal {
namespace {

TEST_CASE("AddRepeatedly equals each counter's own loop, bit for bit", "[policy]") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int32_t> chains_of(0, 11), times_of(-3, 700);
  std::uniform_real_distribution<double> start_of(0, 1e7), step_of(1e-3, 5);
  for (int trial = 0; trial < 500; ++trial) {
    const int32_t n = chains_of(rng);
    std::vector<double> counters(n), expected(n);
    std::vector<RepeatedAdd> adds;
    for (int32_t i = 0; i < n; ++i) {
      counters[i] = expected[i] = start_of(rng);
      const double step = step_of(rng) / 3;  // rarely exact: rounding shows
      const int32_t times = times_of(rng);
      for (int32_t k = 0; k < times; ++k) expected[i] += step;
      adds.push_back({&counters[i], step, times});
    }
    AddRepeatedly(adds);
    for (int32_t i = 0; i < n; ++i) {
      INFO("trial " << trial << ", chain " << i << " of " << n);
      CHECK(std::memcmp(&counters[i], &expected[i], sizeof(double)) == 0);
    }
  }
}

}  // namespace
}  // namespace hearth::policy_internal

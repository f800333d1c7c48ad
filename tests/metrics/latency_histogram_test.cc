#include "hearth/metrics/latency_histogram.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace hearth {
namespace {

constexpr size_t kInf = LatencyHistogram::kNumBounds;

TEST_CASE("latency buckets are ascending and end at five minutes", "[metrics]") {
  const auto& b = LatencyHistogram::kBounds;
  for (size_t i = 1; i < b.size(); ++i) CHECK(b[i - 1] < b[i]);
  CHECK(b.front() == 0.001);
  CHECK(b.back() == 300.0);
}

TEST_CASE("an observation lands in the first bucket whose bound is >= it",
          "[metrics]") {
  LatencyHistogram h;
  h.Observe(0.04);   // exactly a bound: le="0.04" counts it
  h.Observe(0.041);  // just above: the next bucket
  h.Observe(1e6);    // beyond the last bound: +Inf only
  h.Observe(-3);     // clamped to 0: the first bucket
  h.Observe(NAN);    // likewise, and the sum stays finite
  CHECK(h.BucketCount(0) == 2);
  CHECK(h.BucketCount(5) == 1);   // kBounds[5] == 0.04
  CHECK(h.BucketCount(6) == 1);
  CHECK(h.BucketCount(kInf) == 1);
  CHECK(h.count() == 5);
  CHECK(h.sum() == Approx(0.04 + 0.041 + 1e6));
  CHECK(h.CumulativeCount(kInf - 1) == 4);
  CHECK(h.CumulativeCount(kInf) == 5);
}

TEST_CASE("histogram accounting holds for random observations (property)",
          "[metrics]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    // Log-uniform over 0.1 ms .. 1000 s, so every bucket gets traffic, plus
    // exact bounds, where off-by-one errors live.
    std::uniform_real_distribution<double> log10(-4, 3);
    std::uniform_int_distribution<size_t> pick(0, kInf - 1);
    std::vector<double> values;
    LatencyHistogram h, first_half, second_half;
    const int n = 1 + static_cast<int>(seed * 37 % 500);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      const double v = i % 5 == 0 ? LatencyHistogram::kBounds[pick(rng)]
                                  : std::pow(10.0, log10(rng));
      values.push_back(v);
      sum += v;
      h.Observe(v);
      (i < n / 2 ? first_half : second_half).Observe(v);
    }
    INFO("seed " << seed << ", " << n << " observations");
    CHECK(h.count() == static_cast<uint64_t>(n));
    CHECK(h.sum() == Approx(sum));
    uint64_t previous = 0;
    for (size_t i = 0; i <= kInf; ++i) {
      const uint64_t cumulative = h.CumulativeCount(i);
      CHECK(cumulative >= previous);
      previous = cumulative;
      if (i < kInf) {
        uint64_t at_most = 0;
        for (double v : values) at_most += v <= LatencyHistogram::kBounds[i] ? 1 : 0;
        CHECK(cumulative == at_most);
      }
    }
    CHECK(h.CumulativeCount(kInf) == h.count());
    first_half.Merge(second_half);
    CHECK(first_half.count() == h.count());
    CHECK(first_half.sum() == Approx(h.sum()));
    for (size_t i = 0; i <= kInf; ++i) CHECK(first_half.BucketCount(i) == h.BucketCount(i));
  }
}

}  // namespace
}  // namespace hearth

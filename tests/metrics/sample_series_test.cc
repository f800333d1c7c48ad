#include "hearth/metrics/sample_series.h"

#include <catch2/catch.hpp>

namespace hearth {
namespace {


TEST_CASE("nearest-rank percentiles", "[metrics]") {
  SampleSeries s;
  for (double v : {4.0, 1.0, 3.0, 2.0}) s.Add(v);
  CHECK(s.Percentile(50) == 2.0);
  CHECK(s.Percentile(75) == 3.0);
  CHECK(s.Percentile(76) == 4.0);
  CHECK(s.Percentile(0) == 1.0);
  CHECK(s.Percentile(100) == 4.0);
  DistributionSummary d = s.Summarize();
  CHECK(d.count == 4);
  CHECK(d.mean == Approx(2.5));
  CHECK(d.p99 == 4.0);
  CHECK(d.max == 4.0);
  CHECK(SampleSeries().Summarize().count == 0);
  CHECK(SampleSeries().Percentile(50) == 0.0);
}

TEST_CASE("reservoir keeps exact moments and stays deterministic",
          "[metrics]") {
  SampleSeries a(100, 7), b(100, 7), c(100, 8);
  for (int i = 1; i <= 10000; ++i) {
    a.Add(i);
    b.Add(i);
    c.Add(i);
  }
  CHECK(a.sampled());
  CHECK(a.count() == 10000);
  CHECK(a.mean() == Approx(5000.5));
  CHECK(a.max() == 10000);
  CHECK(a.min() == 1);
  CHECK(a.Sorted().size() == 100);
  CHECK(a.Percentile(50) == b.Percentile(50));
  CHECK(a.Percentile(50) != c.Percentile(50));
  // A uniform sample of 1..10000: its median lies well inside.
  CHECK(a.Percentile(50) > 2500);
  CHECK(a.Percentile(50) < 7500);
}

}  // namespace
}  // namespace hearth

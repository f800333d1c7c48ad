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
  // Summarize() before any sort selects the same ranks.
  SampleSeries u;
  for (double v : {9.0, 4.0, 1.0, 7.0, 3.0, 2.0, 8.0, 6.0, 5.0, 10.0}) u.Add(v);
  DistributionSummary e = u.Summarize();
  CHECK(e.p50 == 5.0);
  CHECK(e.p90 == 9.0);
  CHECK(e.p99 == 10.0);
  CHECK(u.Percentile(50) == 5.0);
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

// The jobs' Prometheus text: well-formed, one series per queue, and
// consistent with the snapshot it renders.

#include <string>

#include <catch2/catch.hpp>

#include "hearth/jobs/jobs_prometheus.h"
#include "tests/jobs/planner_harness.h"

namespace hearth {
namespace {

TEST_CASE("the jobs exposition carries every queue's gauges, counters and histograms",
          "[jobs]") {
  jobs_testing::PlannerHarness h(HouseholdJobQueues(2));
  const JobId a = h.Submit("documents");
  h.Submit("documents");
  h.Submit("library");
  h.Plan();
  h.Advance(absl::Milliseconds(30));
  h.Return(a);
  REQUIRE(h.planner().SetInteractiveDemand({.interactive_backlog = 4}, h.now()).ok());
  const std::string text = JobsPrometheusText(h.planner().Stats(h.now()));
  REQUIRE_THAT(text, Catch::Contains("# TYPE hearth_jobs_queued gauge\n"));
  REQUIRE_THAT(text, Catch::Contains("hearth_jobs_ended_total{queue=\"documents\",outcome=\"done\"} 1\n"));
  REQUIRE_THAT(text, Catch::Contains("hearth_jobs_ended_total{queue=\"library\",outcome=\"rejected\"} 0\n"));
  REQUIRE_THAT(text, Catch::Contains("hearth_jobs_submitted_total{queue=\"documents\"} 2\n"));
  REQUIRE_THAT(text, Catch::Contains("# TYPE hearth_jobs_run_seconds histogram\n"));
  REQUIRE_THAT(text, Catch::Contains("hearth_jobs_run_seconds_bucket{queue=\"documents\",le=\"0.04\"} 1\n"));
  REQUIRE_THAT(text, Catch::Contains("hearth_jobs_run_seconds_count{queue=\"documents\"} 1\n"));
  REQUIRE_THAT(text, Catch::Contains("hearth_jobs_interactive_pressure 0.5\n"));
  REQUIRE_THAT(text, Catch::Contains("hearth_jobs_oldest_wait_seconds{queue=\"library\"}"));
  REQUIRE_THAT(text, Catch::Contains("hearth_jobs_concurrency_limit{queue=\"interactive\"} 2\n"));
  // Every line is a comment or `name{labels} value`, and every family is
  // declared once.
  size_t start = 0;
  int types = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    REQUIRE(end != std::string::npos);
    const std::string line = text.substr(start, end - start);
    if (line.rfind("# TYPE ", 0) == 0) ++types;
    REQUIRE((line.rfind("# ", 0) == 0 || line.rfind("hearth_jobs_", 0) == 0));
    start = end + 1;
  }
  REQUIRE(types == 18);
}

TEST_CASE("an invalid prefix falls back to hearth, as the core's does", "[jobs]") {
  jobs_testing::PlannerHarness h(HouseholdJobQueues(2));
  const JobPoolStats stats = h.planner().Stats(h.now());
  REQUIRE_THAT(JobsPrometheusText(stats, "my home"), Catch::StartsWith("# HELP hearth_jobs_"));
  REQUIRE_THAT(JobsPrometheusText(stats, "house"), Catch::StartsWith("# HELP house_jobs_"));
}

}  // namespace
}  // namespace hearth

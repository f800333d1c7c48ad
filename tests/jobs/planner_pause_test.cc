// Pause and resume: a paused queue starts nothing, its running jobs finish,
// its waiting jobs wait (their queue timeouts still run), other queues are
// unaffected.

#include <catch2/catch.hpp>

#include "hearth/jobs/job_planner.h"
#include "tests/jobs/planner_harness.h"

namespace hearth {
namespace {

using jobs_testing::PlannerHarness;

TEST_CASE("a paused queue starts nothing until resumed, running jobs finish", "[jobs]") {
  PlannerHarness h(HouseholdJobQueues(4));  // library: 2 slots
  const JobId a = h.Submit("library");
  h.Plan();
  REQUIRE(h.Running(a));
  REQUIRE(h.planner().Pause("library").ok());
  REQUIRE(h.planner().Pause("library").ok());  // idempotent
  const JobId b = h.Submit("library");
  const JobId doc = h.Submit("documents");
  h.Plan();
  REQUIRE(h.Running(a));  // not interrupted
  REQUIRE_FALSE(h.Running(b));
  REQUIRE(h.Running(doc));  // other queues go on
  REQUIRE(h.planner().Stats(h.now()).queues[2].paused);
  REQUIRE(h.planner().Stats(h.now()).queues[2].effective_concurrency == 0);
  h.Return(a);
  REQUIRE(h.Result(a).end == JobEnd::kDone);
  REQUIRE_FALSE(h.Running(b));
  h.Advance(absl::Hours(1));
  REQUIRE_FALSE(h.Running(b));
  REQUIRE(h.planner().Stats(h.now()).queues[2].oldest_wait == absl::Hours(1));
  REQUIRE(h.planner().Resume("library").ok());
  h.Plan();
  REQUIRE(h.Running(b));
}

TEST_CASE("a queue may start paused, and queue timeouts run while it is", "[jobs]") {
  JobPoolOptions o = HouseholdJobQueues(4);
  o.queues[2].start_paused = true;
  PlannerHarness h(o);
  JobSpec spec;
  spec.queue = "library";
  spec.queue_timeout = absl::Minutes(10);
  const JobId id = h.Submit(spec);
  h.Advance(absl::Minutes(9));
  REQUIRE_FALSE(h.Ended(id));
  h.Advance(absl::Minutes(1));
  REQUIRE(h.Result(id).end == JobEnd::kTimedOut);
  REQUIRE(h.Result(id).status.code() == absl::StatusCode::kDeadlineExceeded);
  REQUIRE(h.Result(id).attempts == 0);
}

TEST_CASE("pausing an unknown queue names the queues there are", "[jobs]") {
  PlannerHarness h(HouseholdJobQueues(4));
  const absl::Status s = h.planner().Pause("scans");
  REQUIRE(s.code() == absl::StatusCode::kNotFound);
  REQUIRE_THAT(std::string(s.message()), Catch::Contains("\"scans\"") &&
                                             Catch::Contains("\"library\""));
  REQUIRE(h.planner().Resume("").code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace hearth

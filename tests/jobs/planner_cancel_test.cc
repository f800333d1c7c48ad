// Cancellation and shutdown: every job ends exactly once whatever phase it
// was in, and a cancelled attempt keeps its slot until it returns.

#include <catch2/catch.hpp>

#include "hearth/jobs/job_planner.h"
#include "tests/jobs/planner_harness.h"

namespace hearth {
namespace {

using jobs_testing::OneQueue;
using jobs_testing::PlannerHarness;

TEST_CASE("cancelling a waiting job ends it at once", "[jobs]") {
  PlannerHarness h(OneQueue("q", 1));
  const JobId running = h.Submit("q");
  const JobId waiting = h.Submit("q");
  h.Plan();
  REQUIRE(h.Cancel(waiting).ok());
  REQUIRE(h.Result(waiting).end == JobEnd::kCancelled);
  REQUIRE(h.Result(waiting).attempts == 0);
  REQUIRE(h.Cancel(waiting).code() == absl::StatusCode::kNotFound);
  REQUIRE(h.planner().Stats(h.now()).queues[0].queued == 0);
  (void)running;
}

TEST_CASE("cancelling a running job ends it now and frees its slot when it returns",
          "[jobs]") {
  PlannerHarness h(OneQueue("q", 1));
  const JobId a = h.Submit("q");
  const JobId b = h.Submit("q");
  h.Plan();
  REQUIRE(h.Cancel(a).ok());
  REQUIRE(h.Result(a).end == JobEnd::kCancelled);
  REQUIRE(h.stops() == std::vector<JobId>{a});
  REQUIRE(h.Cancel(a).code() == absl::StatusCode::kNotFound);
  h.Plan();
  REQUIRE_FALSE(h.Running(b));  // a's thread is still busy
  h.Return(a, absl::OkStatus());  // finished anyway: too late, still cancelled
  REQUIRE(h.Result(a).end == JobEnd::kCancelled);
  REQUIRE(h.Running(b));
  JobDecisions d;
  REQUIRE(h.planner().AttemptEnded(a, 1, absl::OkStatus(), h.now(), &d).code() ==
          absl::StatusCode::kNotFound);
}

TEST_CASE("cancelling during a backoff or a timed-out attempt awaiting retry", "[jobs]") {
  JobPoolOptions o = OneQueue("q", 1);
  o.queues[0].retry.max_retries = 5;
  PlannerHarness h(o);
  JobSpec spec;
  spec.queue = "q";
  spec.run_timeout = absl::Seconds(1);
  const JobId backing_off = h.Submit("q");
  h.Plan();
  h.Return(backing_off, absl::UnavailableError("later"));
  REQUIRE(h.Cancel(backing_off).ok());
  REQUIRE(h.Result(backing_off).end == JobEnd::kCancelled);

  const JobId timed_out = h.Submit(spec);
  h.Plan();
  h.Advance(absl::Seconds(1));
  REQUIRE_FALSE(h.Ended(timed_out));  // waiting to return, then retry
  REQUIRE(h.Cancel(timed_out).ok());
  REQUIRE(h.Result(timed_out).end == JobEnd::kCancelled);
  h.Return(timed_out);
  h.Advance(absl::Minutes(5));
  REQUIRE(h.planner().idle());
  REQUIRE(h.started().size() == 2);  // never retried
}

TEST_CASE("shutdown rejects waiting jobs and ends running ones by what they return",
          "[jobs]") {
  PlannerHarness h(OneQueue("q", 2));
  const JobId ok = h.Submit("q");
  const JobId stopped = h.Submit("q");
  const JobId waiting = h.Submit("q");
  h.Plan();
  h.Shutdown();
  REQUIRE(h.Result(waiting).end == JobEnd::kRejected);
  REQUIRE(h.Result(waiting).status.code() == absl::StatusCode::kUnavailable);
  REQUIRE(h.stops().size() == 2);
  REQUIRE(h.planner().Submit(JobSpec{.queue = "q"}, h.now()).status().code() ==
          absl::StatusCode::kFailedPrecondition);
  h.Return(ok, absl::OkStatus());
  h.Return(stopped, absl::UnavailableError("interrupted"));  // not retried
  REQUIRE(h.Result(ok).end == JobEnd::kDone);
  REQUIRE(h.Result(stopped).end == JobEnd::kCancelled);
  REQUIRE(h.planner().idle());
}

TEST_CASE("unknown ids are NotFound, not undefined behaviour", "[jobs]") {
  PlannerHarness h(OneQueue("q", 1));
  JobDecisions d;
  REQUIRE(h.planner().Cancel(JobId(42), h.now(), &d).code() == absl::StatusCode::kNotFound);
  REQUIRE(h.planner().Cancel(JobId(), h.now(), &d).code() == absl::StatusCode::kNotFound);
  const JobId id = h.Submit("q");
  REQUIRE(h.planner().AttemptEnded(id, 1, absl::OkStatus(), h.now(), &d).code() ==
          absl::StatusCode::kNotFound);  // not started yet
  h.Plan();
  REQUIRE(h.planner().AttemptEnded(id, 2, absl::OkStatus(), h.now(), &d).code() ==
          absl::StatusCode::kNotFound);  // wrong attempt
  REQUIRE(d.empty());
}

}  // namespace
}  // namespace hearth

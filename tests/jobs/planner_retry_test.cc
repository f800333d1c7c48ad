// Timeouts and retries: run timeouts ask the attempt to stop and retry it
// after its backoff; the backoff grows as configured; errors that cannot get
// better are not retried; a retry keeps its place in line.

#include <catch2/catch.hpp>

#include "hearth/jobs/job_planner.h"
#include "tests/jobs/planner_harness.h"

namespace hearth {
namespace {

using jobs_testing::OneQueue;
using jobs_testing::PlannerHarness;

JobPoolOptions Retrying(int max_retries) {
  JobPoolOptions o = OneQueue("embed", 2);
  o.queues[0].retry = {.max_retries = max_retries,
                       .initial_backoff = absl::Seconds(1),
                       .multiplier = 3.0,
                       .max_backoff = absl::Seconds(5)};
  return o;
}

TEST_CASE("retryable errors back off 1, 3, 5 s and then fail with the last error", "[jobs]") {
  PlannerHarness h(Retrying(3));
  const JobId id = h.Submit("embed");
  h.Plan();
  const absl::Duration backoffs[] = {absl::Seconds(1), absl::Seconds(3), absl::Seconds(5)};
  for (const absl::Duration backoff : backoffs) {
    h.Return(id, absl::UnavailableError("vector store down"));
    REQUIRE_FALSE(h.Running(id));
    REQUIRE(h.planner().NextEventTime() == h.now() + backoff);
    REQUIRE(h.planner().Stats(h.now()).queues[0].backing_off == 1);
    h.Advance(backoff - absl::Milliseconds(1));
    REQUIRE_FALSE(h.Running(id));
    h.Advance(absl::Milliseconds(1));
    REQUIRE(h.Running(id));
  }
  h.Return(id, absl::UnavailableError("still down"));
  const JobResult& r = h.Result(id);
  REQUIRE(r.end == JobEnd::kFailed);
  REQUIRE(r.attempts == 4);
  REQUIRE(r.status.message() == "still down");
  REQUIRE(h.planner().Stats(h.now()).queues[0].retries == 3);
}

TEST_CASE("errors that cannot get better are not retried", "[jobs]") {
  PlannerHarness h(Retrying(3));
  const JobId id = h.Submit("embed");
  h.Plan();
  h.Return(id, absl::InvalidArgumentError("not UTF-8"));
  REQUIRE(h.Result(id).end == JobEnd::kFailed);
  REQUIRE(h.Result(id).attempts == 1);
  REQUIRE(IsRetryableJobError(absl::UnavailableError("")));
  REQUIRE(IsRetryableJobError(absl::InternalError("")));
  REQUIRE_FALSE(IsRetryableJobError(absl::CancelledError("")));
  REQUIRE_FALSE(IsRetryableJobError(absl::NotFoundError("")));
  REQUIRE_FALSE(IsRetryableJobError(absl::OkStatus()));
}

TEST_CASE("a run timeout stops the attempt, retries it once it returns, then times out",
          "[jobs]") {
  PlannerHarness h(Retrying(1));
  JobSpec spec;
  spec.queue = "embed";
  spec.run_timeout = absl::Seconds(30);
  const JobId id = h.Submit(spec);
  h.Plan();
  h.Advance(absl::Seconds(30));
  REQUIRE(h.stops().size() == 1);
  REQUIRE_FALSE(h.Ended(id));  // a retry is left
  REQUIRE(h.Running(id));      // its thread is still busy: it keeps its slot
  h.Advance(absl::Seconds(10));
  REQUIRE(h.Running(id));
  h.Return(id, absl::CancelledError("stopped"));  // what it returns does not matter
  h.Advance(absl::Seconds(1));                    // the backoff
  REQUIRE(h.Running(id));
  REQUIRE(h.started().back().attempt == 2);
  h.Advance(absl::Seconds(30));
  // No retry left: the result comes at the deadline, the slot on return.
  REQUIRE(h.Result(id).end == JobEnd::kTimedOut);
  REQUIRE(h.Result(id).status.code() == absl::StatusCode::kDeadlineExceeded);
  REQUIRE(h.Running(id));
  h.Return(id, absl::OkStatus());  // late success changes nothing
  REQUIRE(h.Result(id).end == JobEnd::kTimedOut);
  REQUIRE(h.planner().idle());
}

TEST_CASE("a retry keeps its rank: it goes ahead of work submitted after it", "[jobs]") {
  JobPoolOptions o = Retrying(2);
  o.queues[0].max_concurrency = 1;
  o.queues[0].concurrency_under_demand = 1;
  o.worker_slots = 1;
  PlannerHarness h(o);
  const JobId first = h.Submit("embed");
  h.Plan();
  h.clock().Advance(absl::Seconds(1));
  const JobId later = h.Submit("embed");
  h.Return(first, absl::AbortedError("conflict"));
  REQUIRE(h.Running(later));  // the slot is not kept idle during the backoff
  h.Advance(absl::Seconds(1));
  const JobId latest = h.Submit("embed");
  h.Return(later);
  REQUIRE(h.Running(first));
  REQUIRE_FALSE(h.Running(latest));
}

TEST_CASE("queue timeouts count from submission and end jobs that never started", "[jobs]") {
  PlannerHarness h(OneQueue("q", 1));
  const JobId blocker = h.Submit("q");
  JobSpec spec;
  spec.queue = "q";
  spec.queue_timeout = absl::Seconds(5);
  const JobId waiting = h.Submit(spec);
  const JobId patient = h.Submit("q");
  h.Plan();
  h.Advance(absl::Seconds(5));
  REQUIRE(h.Result(waiting).end == JobEnd::kTimedOut);
  REQUIRE_FALSE(h.Ended(patient));
  h.Return(blocker);
  REQUIRE(h.Running(patient));
  // A job that started is past its queue timeout for good.
  h.Advance(absl::Hours(1));
  REQUIRE(h.Running(patient));
}

}  // namespace
}  // namespace hearth

// Hostile inputs: every bad option, spec and demand is refused with
// InvalidArgument (or the code its case calls for), naming the field, the
// value and what is allowed; nothing is half-applied.

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "hearth/jobs/job_planner.h"
#include "hearth/jobs/job_pool.h"
#include "tests/jobs/planner_harness.h"

namespace hearth {
namespace {

struct BadOptions {
  const char* what;
  std::function<void(JobPoolOptions&)> spoil;
  const char* field;
};

TEST_CASE("bad pool options are refused with the field, value and range", "[jobs]") {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  const BadOptions cases[] = {
      {"no queues", [](auto& o) { o.queues.clear(); }, "JobPoolOptions.queues"},
      {"65 queues", [](auto& o) { o.queues.resize(65, o.queues[0]); }, "JobPoolOptions.queues"},
      {"zero slots", [](auto& o) { o.worker_slots = 0; }, "worker_slots is 0; must be in [1, 1024]"},
      {"negative slots", [](auto& o) { o.worker_slots = -4; }, "worker_slots"},
      {"huge slots", [](auto& o) { o.worker_slots = 1 << 30; }, "worker_slots"},
      {"zero pool io", [](auto& o) { o.max_io_depth = 0; }, "JobPoolOptions.max_io_depth"},
      {"zero aging", [](auto& o) { o.aging_period = absl::ZeroDuration(); }, "aging_period"},
      {"infinite aging", [](auto& o) { o.aging_period = absl::InfiniteDuration(); }, "aging_period"},
      {"empty name", [](auto& o) { o.queues[0].name = ""; }, "queues[0].name"},
      {"name with a quote", [](auto& o) { o.queues[1].name = "a\"b"; }, "queues[1].name"},
      {"long name", [](auto& o) { o.queues[0].name = std::string(65, 'a'); }, "queues[0].name"},
      {"duplicate name", [](auto& o) { o.queues[1].name = o.queues[0].name; }, "used twice"},
      {"zero concurrency", [](auto& o) { o.queues[1].max_concurrency = 0; },
       "queues[1].max_concurrency is 0; must be in [1, 1024]"},
      {"floor above max", [](auto& o) { o.queues[1].concurrency_under_demand = 99; },
       "concurrency_under_demand"},
      {"negative floor", [](auto& o) { o.queues[1].concurrency_under_demand = -1; },
       "concurrency_under_demand"},
      {"zero queue io", [](auto& o) { o.queues[3].max_io_depth = 0; }, "queues[3].max_io_depth"},
      {"zero max_queued", [](auto& o) { o.queues[0].max_queued = 0; }, "max_queued"},
      {"huge priority", [](auto& o) { o.queues[0].default_priority = 1 << 30; }, "default_priority"},
      {"negative priority", [](auto& o) { o.queues[0].default_priority = -1; }, "default_priority"},
      {"zero run timeout", [](auto& o) { o.queues[0].default_run_timeout = absl::ZeroDuration(); },
       "default_run_timeout"},
      {"negative queue timeout",
       [](auto& o) { o.queues[0].default_queue_timeout = -absl::Seconds(1); }, "default_queue_timeout"},
      {"negative retries", [](auto& o) { o.queues[0].retry.max_retries = -1; }, "retry.max_retries"},
      {"huge retries", [](auto& o) { o.queues[0].retry.max_retries = 1000; }, "retry.max_retries"},
      {"zero backoff", [](auto& o) { o.queues[0].retry.initial_backoff = absl::ZeroDuration(); },
       "retry.initial_backoff"},
      {"infinite backoff",
       [](auto& o) { o.queues[0].retry.initial_backoff = absl::InfiniteDuration(); },
       "retry.initial_backoff"},
      {"NaN multiplier", [nan](auto& o) { o.queues[0].retry.multiplier = nan; }, "retry.multiplier is nan"},
      {"infinite multiplier", [inf](auto& o) { o.queues[0].retry.multiplier = inf; }, "retry.multiplier"},
      {"shrinking multiplier", [](auto& o) { o.queues[0].retry.multiplier = 0.5; }, "retry.multiplier"},
      {"max below initial", [](auto& o) { o.queues[0].retry.max_backoff = absl::Milliseconds(1); },
       "retry.max_backoff"},
      {"zero backlog", [](auto& o) { o.give_back.backlog_for_full_pressure = 0; },
       "backlog_for_full_pressure"},
      {"NaN comfort", [nan](auto& o) { o.give_back.slack_comfortable = nan; }, "slack_comfortable"},
      {"infinite exhausted", [inf](auto& o) { o.give_back.slack_exhausted = -inf; }, "slack_exhausted"},
      {"inverted slack", [](auto& o) { o.give_back.slack_exhausted = 0.9; }, "slack_exhausted"},
      {"zero expiry", [](auto& o) { o.give_back.demand_expiry = absl::ZeroDuration(); }, "demand_expiry"},
  };
  for (const BadOptions& c : cases) {
    JobPoolOptions o = HouseholdJobQueues(4);
    c.spoil(o);
    INFO(c.what);
    const absl::Status planner = JobPlanner::Create(o).status();
    REQUIRE(planner.code() == absl::StatusCode::kInvalidArgument);
    REQUIRE_THAT(std::string(planner.message()), Catch::Contains(c.field));
    REQUIRE(JobPool::Create(o).status() == planner);
  }
}

struct BadSpec {
  const char* what;
  std::function<void(JobSpec&)> spoil;
  const char* field;
};

TEST_CASE("bad job specs are refused and leave nothing behind", "[jobs]") {
  const BadSpec cases[] = {
      {"unknown queue", [](auto& s) { s.queue = "scans"; }, "no job queue named \"scans\""},
      {"empty queue", [](auto& s) { s.queue = ""; }, "the queues are"},
      {"binary queue", [](auto& s) { s.queue = std::string("\0\xff", 2); }, "\\x00\\xff"},
      {"huge priority", [](auto& s) { s.priority = std::numeric_limits<int>::max(); },
       "JobSpec.priority is 2147483647; must be in [0, 100]"},
      {"negative priority", [](auto& s) { s.priority = -1; }, "JobSpec.priority"},
      {"zero run timeout", [](auto& s) { s.run_timeout = absl::ZeroDuration(); }, "run_timeout"},
      {"negative queue timeout", [](auto& s) { s.queue_timeout = -absl::InfiniteDuration(); },
       "queue_timeout"},
      {"negative retries", [](auto& s) { s.max_retries = -3; }, "max_retries"},
      {"huge retries", [](auto& s) { s.max_retries = 1 << 20; }, "max_retries"},
      {"long label", [](auto& s) { s.label = std::string(100000, 'x'); }, "JobSpec.label is 100000 bytes"},
  };
  jobs_testing::PlannerHarness h(HouseholdJobQueues(4));
  for (const BadSpec& c : cases) {
    JobSpec spec;
    spec.queue = "documents";
    c.spoil(spec);
    INFO(c.what);
    const absl::Status s = h.planner().Submit(spec, h.now()).status();
    REQUIRE(s.code() == absl::StatusCode::kInvalidArgument);
    REQUIRE_THAT(std::string(s.message()), Catch::Contains(c.field));
  }
  REQUIRE(h.planner().idle());
  for (const JobQueueStats& q : h.planner().Stats(h.now()).queues) REQUIRE(q.submitted == 0);
}

TEST_CASE("a full queue refuses with ResourceExhausted until it drains", "[jobs]") {
  JobPoolOptions o = jobs_testing::OneQueue("q", 1);
  o.queues[0].max_queued = 2;
  jobs_testing::PlannerHarness h(o);
  const JobId running = h.Submit("q");
  h.Plan();
  h.Submit("q");
  h.Submit("q");
  const absl::Status full = h.planner().Submit(JobSpec{.queue = "q"}, h.now()).status();
  REQUIRE(full.code() == absl::StatusCode::kResourceExhausted);
  REQUIRE_THAT(std::string(full.message()), Catch::Contains("max_queued"));
  h.Return(running);
  REQUIRE(h.planner().Submit(JobSpec{.queue = "q"}, h.now()).ok());
}

TEST_CASE("bad interactive demand is refused", "[jobs]") {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  const InteractiveDemand cases[] = {
      {.interactive_backlog = -1},
      {.interactive_backlog = std::numeric_limits<int64_t>::max()},
      {.slo_slack = nan},
      {.slo_slack = inf},
      {.slo_slack = -inf},
      {.slo_slack = 1.5},
      {.slo_slack = -1e7},
  };
  for (const InteractiveDemand& d : cases) {
    const absl::Status s = ValidateInteractiveDemand(d);
    REQUIRE(s.code() == absl::StatusCode::kInvalidArgument);
    REQUIRE_THAT(std::string(s.message()), Catch::Contains("InteractiveDemand."));
  }
  REQUIRE(ValidateInteractiveDemand({}).ok());
}

TEST_CASE("a pool refuses empty work without keeping anything", "[jobs]") {
  auto pool = *JobPool::Create(HouseholdJobQueues(1));
  bool called = false;
  const absl::Status s =
      pool->Submit(JobSpec{.queue = "documents"}, JobWork(), [&](const JobResult&) { called = true; })
          .status();
  REQUIRE(s.code() == absl::StatusCode::kInvalidArgument);
  pool.reset();
  REQUIRE_FALSE(called);
}

TEST_CASE("time going backwards is taken as no time passing", "[jobs]") {
  jobs_testing::PlannerHarness h(jobs_testing::OneQueue("q", 1));
  JobSpec spec{.queue = "q"};
  spec.queue_timeout = absl::Seconds(5);
  const JobId blocker = h.Submit("q");
  h.Plan();
  const JobId id = h.Submit(spec);
  JobDecisions d;
  h.planner().Plan(h.now() - absl::Hours(1), &d);
  h.planner().Plan(absl::InfinitePast(), &d);
  REQUIRE(d.empty());
  REQUIRE(h.planner().NextEventTime() == h.now() + absl::Seconds(5));
  (void)blocker;
  (void)id;
}

}  // namespace
}  // namespace hearth

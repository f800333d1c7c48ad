// The give-back rule: background queues use idle slots and give them back
// while interactive demand is high, and take them again when it falls or
// the host stops reporting it.

#include <cmath>

#include <catch2/catch.hpp>

#include "hearth/jobs/interactive_demand.h"
#include "hearth/jobs/job_planner.h"
#include "tests/jobs/planner_harness.h"

namespace hearth {
namespace {

using jobs_testing::PlannerHarness;

TEST_CASE("background concurrency falls monotonically from max to the floor", "[jobs]") {
  const int max = GENERATE(1, 2, 5, 16);
  const int floor = GENERATE(0, 1, 2);
  if (floor > max) return;
  REQUIRE(BackgroundConcurrency(max, floor, 0.0) == max);
  REQUIRE(BackgroundConcurrency(max, floor, 1.0) == floor);
  int previous = max;
  for (int i = 0; i <= 1000; ++i) {
    const int c = BackgroundConcurrency(max, floor, i / 1000.0);
    REQUIRE(c <= previous);
    REQUIRE(c >= floor);
    previous = c;
  }
  // Any pressure at all gives back a slot when there is one to give.
  if (max > floor) REQUIRE(BackgroundConcurrency(max, floor, 0.001) == max - 1);
  // Out-of-range pressure is clamped, not trusted.
  REQUIRE(BackgroundConcurrency(max, floor, -3.0) == max);
  REQUIRE(BackgroundConcurrency(max, floor, 7.0) == floor);
}

TEST_CASE("pressure rises with the backlog and as the SLO slack shrinks", "[jobs]") {
  const GiveBackOptions o;  // full at a backlog of 8; slack 0.5 .. 0
  REQUIRE(InteractivePressure({}, o) == 0.0);
  REQUIRE(InteractivePressure({.interactive_backlog = 4}, o) == Approx(0.5));
  REQUIRE(InteractivePressure({.interactive_backlog = 8}, o) == 1.0);
  REQUIRE(InteractivePressure({.interactive_backlog = 800}, o) == 1.0);
  REQUIRE(InteractivePressure({.slo_slack = 0.25}, o) == Approx(0.5));
  REQUIRE(InteractivePressure({.slo_slack = -2.0}, o) == 1.0);
  // The larger of the two signals wins.
  REQUIRE(InteractivePressure({.interactive_backlog = 2, .slo_slack = 0.25}, o) == Approx(0.5));
  double previous = 0;
  for (int backlog = 0; backlog <= 20; ++backlog) {
    for (int s = 100; s >= -100; s -= 10) {
      const double p = InteractivePressure({.interactive_backlog = backlog, .slo_slack = s / 100.0}, o);
      REQUIRE(p >= 0.0);
      REQUIRE(p <= 1.0);
      if (s < 100) REQUIRE(p >= previous);
      previous = p;
    }
  }
}

JobPoolOptions Household() {
  JobPoolOptions o = HouseholdJobQueues(8);  // documents: 7 slots, 1 under demand
  o.give_back.demand_expiry = absl::Seconds(5);
  return o;
}

TEST_CASE("background queues give slots back under interactive demand and take them again",
          "[jobs]") {
  PlannerHarness h(Household());
  std::vector<JobId> docs;
  for (int i = 0; i < 20; ++i) docs.push_back(h.Submit("documents"));
  h.Plan();
  REQUIRE(h.HeldIn("documents") == 7);  // idle cores are used

  // A burst of voice requests: full pressure. Running parses are not
  // interrupted, but none starts until the queue is down to its floor.
  REQUIRE(h.planner().SetInteractiveDemand({.interactive_backlog = 12}, h.now()).ok());
  h.Plan();
  REQUIRE(h.planner().Stats(h.now()).queues[1].effective_concurrency == 1);
  for (int i = 0; i < 6; ++i) {
    h.Return(h.held().begin()->first);
    REQUIRE(h.HeldIn("documents") == 6 - i);
  }
  h.Return(h.held().begin()->first);
  REQUIRE(h.HeldIn("documents") == 1);  // the floor keeps documents moving

  // Interactive tokenisation still gets every core it asks for.
  for (int i = 0; i < 7; ++i) h.Submit("interactive");
  h.Plan();
  REQUIRE(h.HeldIn("interactive") == 7);

  // The burst is over: the documents take the idle cores back.
  for (int i = 0; i < 7; ++i) h.Return(h.held().rbegin()->first);
  REQUIRE(h.planner().SetInteractiveDemand({}, h.now()).ok());
  h.Plan();
  REQUIRE(h.HeldIn("documents") == 7);
}

TEST_CASE("library scans pause at full pressure and interactive queues never give back",
          "[jobs]") {
  PlannerHarness h(Household());  // library: 4 slots, 0 under demand
  REQUIRE(h.planner().SetInteractiveDemand({.slo_slack = -0.5}, h.now()).ok());
  for (int i = 0; i < 4; ++i) h.Submit("library");
  for (int i = 0; i < 3; ++i) h.Submit("interactive");
  h.Plan();
  REQUIRE(h.HeldIn("library") == 0);
  REQUIRE(h.HeldIn("interactive") == 3);
  const JobPoolStats stats = h.planner().Stats(h.now());
  REQUIRE(stats.interactive_pressure == 1.0);
  REQUIRE(stats.queues[0].effective_concurrency == 8);
  REQUIRE(stats.queues[2].effective_concurrency == 0);
  // Half pressure: half the scans' slots.
  REQUIRE(h.planner().SetInteractiveDemand({.slo_slack = 0.25}, h.now()).ok());
  h.Plan();
  REQUIRE(h.HeldIn("library") == 2);
}

TEST_CASE("demand the host stops reporting expires and the slots come back", "[jobs]") {
  PlannerHarness h(Household());
  REQUIRE(h.planner().SetInteractiveDemand({.interactive_backlog = 100}, h.now()).ok());
  for (int i = 0; i < 4; ++i) h.Submit("library");
  h.Plan();
  REQUIRE(h.HeldIn("library") == 0);
  // The expiry is the next event, so a pool's timer wakes for it.
  REQUIRE(h.planner().NextEventTime() == h.now() + absl::Seconds(5));
  h.Advance(absl::Seconds(4));
  REQUIRE(h.HeldIn("library") == 0);
  h.Advance(absl::Seconds(1));
  REQUIRE(h.HeldIn("library") == 2);  // the library's I/O depth, not its 4 slots
  REQUIRE(h.planner().Stats(h.now()).interactive_pressure == 0.0);
}

TEST_CASE("an invalid demand is refused and the previous one stays", "[jobs]") {
  PlannerHarness h(Household());
  REQUIRE(h.planner().SetInteractiveDemand({.interactive_backlog = 100}, h.now()).ok());
  const absl::Status nan =
      h.planner().SetInteractiveDemand({.slo_slack = std::nan("")}, h.now());
  REQUIRE(nan.code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(h.planner().Stats(h.now()).interactive_pressure == 1.0);
}

}  // namespace
}  // namespace hearth

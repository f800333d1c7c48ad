// Aging: waiting raises a job exactly as priority does, so a low-priority
// job's wait is bounded even under an endless flood of urgent work.

#include <catch2/catch.hpp>

#include "hearth/jobs/job_planner.h"
#include "tests/jobs/planner_harness.h"

namespace hearth {
namespace {

using jobs_testing::OneQueue;
using jobs_testing::PlannerHarness;

// A flood of `high`-priority jobs, one every `gap`, each taking `service`
// (more arrive than one slot can serve), with one priority-0 job submitted
// after `head_start`; returns how long that job waited to start, or
// InfiniteDuration() if it had not started after `horizon`.
absl::Duration LowJobWait(absl::Duration aging, int high, absl::Duration gap,
                          absl::Duration service, absl::Duration horizon) {
  JobPoolOptions o = OneQueue("scan", 1);
  o.aging_period = aging;
  PlannerHarness h(o);
  JobId low;
  absl::Time low_submitted;
  absl::Duration busy_for = absl::ZeroDuration();
  for (absl::Duration t = absl::ZeroDuration(); t < horizon; t += gap) {
    h.Submit("scan", high);
    if (!low.valid() && t >= 5 * gap) {
      low = h.Submit("scan", 0);
      low_submitted = h.now();
    }
    h.Plan();
    if (low.valid() && h.Running(low)) return h.now() - low_submitted;
    // The running job finishes after `service`; time moves in steps of gap.
    busy_for += gap;
    h.clock().Advance(gap);
    if (busy_for >= service && !h.held().empty()) {
      h.Return(h.held().begin()->first);
      busy_for = absl::ZeroDuration();
      if (low.valid() && h.Running(low)) return h.now() - low_submitted;
    }
  }
  return absl::InfiniteDuration();
}

TEST_CASE("aging bounds a low-priority job's wait under a high-priority flood", "[jobs]") {
  const int high = GENERATE(10, 50, kMaxJobPriority);
  const absl::Duration aging = absl::Milliseconds(GENERATE(10, 100));
  const absl::Duration gap = absl::Milliseconds(100);
  const absl::Duration service = absl::Milliseconds(200);  // twice the arrival rate
  // Everything submitted more than high * aging after the low job ranks
  // behind it; ahead of it are at most the jobs that arrived before it (5)
  // and those within that window, each taking `service`.
  const double ahead = 6 + (high * aging) / gap;
  const absl::Duration bound = service * (ahead + 1);
  const absl::Duration wait = LowJobWait(aging, high, gap, service, bound * 3);
  INFO("high " << high << " aging " << aging << " wait " << wait << " bound " << bound);
  REQUIRE(wait <= bound);
}

TEST_CASE("without aging worth the name the same low-priority job starves", "[jobs]") {
  // The control for the bound above: with an aging period of a day, the
  // flood keeps the low job out for the whole horizon.
  const absl::Duration wait = LowJobWait(kMaxJobPeriod, 100, absl::Milliseconds(100),
                                         absl::Milliseconds(200), absl::Seconds(60));
  REQUIRE(wait == absl::InfiniteDuration());
}

TEST_CASE("equal priority runs in submission order across queues", "[jobs]") {
  JobPoolOptions o = OneQueue("a", 1);
  JobQueueOptions b = o.queues[0];
  b.name = "b";
  o.queues.push_back(b);
  o.worker_slots = 1;
  PlannerHarness h(o);
  const JobId first = h.Submit("b", 5);
  h.clock().Advance(absl::Milliseconds(1));
  const JobId second = h.Submit("a", 5);
  h.Plan();
  REQUIRE(h.Running(first));
  h.Return(first);
  REQUIRE(h.Running(second));
}

TEST_CASE("one priority level is worth exactly one aging period of waiting", "[jobs]") {
  JobPoolOptions o = OneQueue("q", 1);
  o.aging_period = absl::Seconds(10);
  PlannerHarness h(o);
  const JobId blocker = h.Submit("q", 0);
  h.Plan();
  const JobId old_low = h.Submit("q", 1);
  h.clock().Advance(absl::Seconds(10));
  // Ranked level with old_low (10 s later, one level higher); the lower id wins.
  const JobId tie = h.Submit("q", 2);
  h.clock().Advance(absl::Seconds(1));
  // One level higher than `tie` but only a second later: ahead of both.
  const JobId newer_higher = h.Submit("q", 3);
  h.Return(blocker);
  REQUIRE(h.Running(newer_higher));
  h.Return(newer_higher);
  REQUIRE(h.Running(old_low));
  h.Return(old_low);
  REQUIRE(h.Running(tie));
}

}  // namespace
}  // namespace hearth

// Properties of JobPlanner under random workloads: the limits are never
// exceeded, every accepted job ends exactly once, and nothing waits while a
// slot it could use is free.

#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/jobs/job_planner.h"
#include "tests/jobs/planner_harness.h"

namespace hearth {
namespace {

using jobs_testing::PlannerHarness;

JobPoolOptions RandomOptions(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  JobPoolOptions o;
  const int queues = pick(1, 4);
  for (int i = 0; i < queues; ++i) {
    JobQueueOptions q;
    q.name = "q" + std::to_string(i);
    q.kind = pick(0, 1) ? JobQueueKind::kBackground : JobQueueKind::kInteractive;
    q.max_concurrency = pick(1, 5);
    q.concurrency_under_demand = pick(0, q.max_concurrency);
    if (pick(0, 1)) q.max_io_depth = pick(1, 3);
    q.jobs_use_io = pick(0, 1);
    q.max_queued = pick(1, 40);
    q.default_priority = pick(0, kMaxJobPriority);
    q.retry.max_retries = pick(0, 3);
    q.retry.initial_backoff = absl::Milliseconds(pick(1, 500));
    q.retry.max_backoff = q.retry.initial_backoff * pick(1, 8);
    o.queues.push_back(q);
  }
  o.worker_slots = pick(1, 8);
  if (pick(0, 1)) o.max_io_depth = pick(1, 4);
  o.aging_period = absl::Milliseconds(pick(1, 2000));
  o.give_back.demand_expiry = absl::Seconds(pick(1, 5));
  return o;
}

JobSpec RandomSpec(std::mt19937_64& rng, const JobPoolOptions& o) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  JobSpec spec;
  spec.queue = o.queues[pick(0, static_cast<int>(o.queues.size()) - 1)].name;
  if (pick(0, 1)) spec.priority = pick(0, kMaxJobPriority);
  if (pick(0, 3) == 0) spec.queue_timeout = absl::Milliseconds(pick(1, 3000));
  if (pick(0, 3) == 0) spec.run_timeout = absl::Milliseconds(pick(1, 3000));
  if (pick(0, 1)) spec.max_retries = pick(0, 3);
  if (pick(0, 1)) spec.uses_io = pick(0, 1) == 1;
  return spec;
}

absl::Status RandomReturn(std::mt19937_64& rng) {
  switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
    case 0:
      return absl::UnavailableError("disk busy");
    case 1:
      return absl::InvalidArgumentError("not a PDF");
    default:
      return absl::OkStatus();
  }
}

// Whether some waiting job of a queue with room could start: if so the
// planner was not work-conserving.
void CheckWorkConserving(PlannerHarness& h, const JobPoolOptions& o) {
  const JobPoolStats stats = h.planner().Stats(h.now());
  if (stats.running >= o.worker_slots) return;
  for (size_t i = 0; i < stats.queues.size(); ++i) {
    const JobQueueStats& q = stats.queues[i];
    const int64_t ready = q.queued - q.backing_off;
    if (ready == 0 || q.running >= q.effective_concurrency) continue;
    // Only I/O limits may hold such a queue back.
    const bool io_full = (o.queues[i].max_io_depth && q.io_in_flight >= *o.queues[i].max_io_depth) ||
                         (o.max_io_depth && stats.io_in_flight >= *o.max_io_depth);
    INFO("queue " << q.name << " has " << ready << " ready jobs and room");
    REQUIRE(io_full);
  }
}

TEST_CASE("random workloads never exceed a limit and end every job exactly once", "[jobs]") {
  const uint64_t seed = GENERATE(range(1, 41));
  std::mt19937_64 rng(seed);
  INFO("seed " << seed);
  const JobPoolOptions options = RandomOptions(rng);
  PlannerHarness h(options);
  std::vector<JobId> accepted;
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int step = 0; step < 600; ++step) {
    switch (pick(0, 9)) {
      case 0:
      case 1:
      case 2: {
        absl::StatusOr<JobId> id = h.TrySubmit(RandomSpec(rng, options));
        if (id.ok()) accepted.push_back(*id);
        // Only a full queue may refuse a valid spec.
        if (!id.ok()) REQUIRE(id.status().code() == absl::StatusCode::kResourceExhausted);
        break;
      }
      case 3:
      case 4:
        if (!h.held().empty()) {
          auto it = h.held().begin();
          std::advance(it, pick(0, static_cast<int>(h.held().size()) - 1));
          h.Return(it->first, RandomReturn(rng));
        }
        break;
      case 5:
        if (!accepted.empty()) (void)h.Cancel(accepted[pick(0, int(accepted.size()) - 1)]);
        break;
      case 6: {
        const std::string& q = options.queues[pick(0, int(options.queues.size()) - 1)].name;
        REQUIRE((pick(0, 1) ? h.planner().Pause(q) : h.planner().Resume(q)).ok());
        break;
      }
      case 7: {
        InteractiveDemand demand{.interactive_backlog = pick(0, 20),
                                 .slo_slack = pick(-100, 100) / 100.0};
        REQUIRE(h.planner().SetInteractiveDemand(demand, h.now()).ok());
        break;
      }
      default:
        h.clock().Advance(absl::Milliseconds(pick(0, 700)));
        break;
    }
    h.Plan();
    CheckWorkConserving(h, options);
  }
  // Wind down: everything still live ends once, then the planner is idle.
  h.Shutdown();
  while (!h.held().empty()) h.Return(h.held().begin()->first, RandomReturn(rng));
  REQUIRE(h.planner().idle());
  REQUIRE(h.results().size() == accepted.size());
  for (const JobId id : accepted) REQUIRE(h.Ended(id));
  // The counters agree with the results.
  uint64_t ended = 0;
  for (const JobQueueStats& q : h.planner().Stats(h.now()).queues) {
    for (uint64_t n : q.ended) ended += n;
  }
  REQUIRE(ended == accepted.size());
}

TEST_CASE("the pool's I/O depth binds across queues, and CPU jobs pass a full one", "[jobs]") {
  JobPoolOptions o;
  JobQueueOptions a, b;
  a.name = "backups";
  a.max_concurrency = 4;
  a.jobs_use_io = true;
  b.name = "loads";
  b.max_concurrency = 4;
  b.jobs_use_io = true;
  o.queues = {a, b};
  o.worker_slots = 8;
  o.max_io_depth = 2;
  PlannerHarness h(o);
  for (int i = 0; i < 3; ++i) h.Submit("backups");
  for (int i = 0; i < 3; ++i) h.Submit("loads");
  JobSpec cpu;
  cpu.queue = "loads";
  cpu.uses_io = false;
  const JobId cpu_id = h.Submit(cpu);
  h.Plan();
  REQUIRE(h.held().size() == 3);  // two I/O jobs, and the CPU job behind them
  REQUIRE(h.Running(cpu_id));
}

TEST_CASE("a model-load queue of I/O depth one loads one model at a time", "[jobs]") {
  JobPoolOptions o = HouseholdJobQueues(8);
  PlannerHarness h(o);
  std::vector<JobId> loads;
  for (int i = 0; i < 4; ++i) loads.push_back(h.Submit("model_load"));
  h.Plan();
  for (int i = 0; i < 4; ++i) {
    REQUIRE(h.HeldIn("model_load") == 1);
    REQUIRE(h.Running(loads[i]));
    h.Return(loads[i]);
  }
  REQUIRE(h.HeldIn("model_load") == 0);
}

}  // namespace
}  // namespace hearth

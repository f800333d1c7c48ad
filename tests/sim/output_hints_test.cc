// Output-length hints (SimulationOptions::output_hints) and the preemption
// counts by kind, through whole simulations.

#include <cstdint>

#include <catch2/catch.hpp>

#include "hearth/policy/mlfq.h"
#include "hearth/sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace hearth {
namespace {

using testing_sim::FlatCost;
using testing_sim::SmallScheduler;

// Requests with equal prompts arriving together, outputs from 1 to ~400
// tokens in a scrambled order, served one at a time: only knowledge of
// the outputs can order them shortest first.
Workload SameTimeJobs() {
  Workload w;
  for (int32_t i = 0; i < 40; ++i) {
    SimRequest r;
    r.prompt_tokens = 32;
    r.output_tokens = 1 + (i * 37) % 400;
    r.max_new_tokens = 512;
    w.requests.push_back(r);
  }
  return w;
}

absl::StatusOr<SimulationResult> Run(const StepCostModel* cost, OutputHintOptions hints) {
  SimulationOptions o;
  o.scheduler = SmallScheduler({"a"}, {"chat"});
  o.scheduler.max_running = 1;
  MlfqOptions m;
  m.starvation_bound = absl::InfiniteDuration();
  m.max_preemptions_per_step = 0;
  o.scheduler.policy_factory = *MlfqPolicyFactory(m);
  o.cost_model = cost;
  o.output_hints = hints;
  return RunSimulation(SameTimeJobs(), o);
}

TEST_CASE("sim: output hints reach the policy, the closer, the shorter the mean JCT", "[sim]") {
  auto cost = FlatCost(10);
  auto none = Run(cost.get(), {});
  auto exact = Run(cost.get(), {.enabled = true});
  auto noisy = Run(cost.get(), {.enabled = true, .noise_sigma = 1.0});
  REQUIRE(none.ok());
  REQUIRE(exact.ok());
  REQUIRE(noisy.ok());
  for (const auto* r : {&*none, &*exact, &*noisy}) REQUIRE(r->report.total.finished == 40);
  INFO("mean JCT s: none " << none->report.total.e2e.mean << ", noisy "
                           << noisy->report.total.e2e.mean << ", exact "
                           << exact->report.total.e2e.mean);
  CHECK(exact->report.total.e2e.mean < noisy->report.total.e2e.mean);
  CHECK(noisy->report.total.e2e.mean < none->report.total.e2e.mean);
  // Deterministic under the seed.
  auto again = Run(cost.get(), {.enabled = true, .noise_sigma = 1.0});
  REQUIRE(again.ok());
  CHECK(again->report.total.e2e.mean == noisy->report.total.e2e.mean);
}

TEST_CASE("sim: bad hint noise is refused naming the field", "[sim]") {
  auto cost = FlatCost(10);
  for (double sigma : {-1.0, 11.0, std::nan("")}) {
    auto r = Run(cost.get(), {.enabled = true, .noise_sigma = sigma});
    REQUIRE(r.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(r.status().message().find("output_hints.noise_sigma") != std::string::npos);
  }
}

TEST_CASE("sim: preemptions split into swap and recompute add up", "[sim]") {
  auto cost = FlatCost(10);
  bool swap = GENERATE(false, true);
  SimulationOptions o;
  o.scheduler = SmallScheduler({"a"}, {"chat"});
  // Too little KV for the jobs' growth: preemption is certain.
  o.scheduler.kv.num_device_blocks = 40;
  if (swap) {
    o.scheduler.kv.num_host_blocks = 16;
    o.scheduler.preemption_mode = PreemptionMode::kSwap;
  }
  o.cost_model = cost.get();
  auto r = RunSimulation(SameTimeJobs(), o);
  REQUIRE(r.ok());
  CHECK(r->report.total.preemptions > 0);
  CHECK(r->swap_preemptions + r->recompute_preemptions == r->report.total.preemptions);
  if (!swap) CHECK(r->swap_preemptions == 0);
}

}  // namespace
}  // namespace hearth

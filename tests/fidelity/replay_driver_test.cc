#include "bench/fidelity/replay_driver.h"

#include <catch2/catch.hpp>

#include "hearth/sim/fitted_cost_model.h"

namespace hearth::fidelity {
namespace {

SchedulerOptions SmallEngine(const std::string& policy) {
  absl::StatusOr<SchedulerOptions> o = ReplaySchedulerOptions(policy);
  REQUIRE(o.ok());
  o->kv.num_device_blocks = 256;
  o->max_batched_tokens = 128;
  o->max_running = 8;
  ModelConfig m;
  m.name = "test";
  m.context_length = 4096;
  m.kv_bytes_per_token = 1024;
  o->models = {m};
  return *o;
}

std::unique_ptr<FittedCostModel> Cost(double c0, double c1, double c3) {
  FittedCoefficients c;
  c.c0 = c0;
  c.c1 = c1;
  c.c3 = c3;
  auto m = FittedCostModel::Create(c);
  REQUIRE(m.ok());
  return *std::move(m);
}

TEST_CASE("A lone request's simulated latencies are the priced steps", "[fidelity]") {
  // One prefill step of 20 tokens (10 ms + 20 x 1 ms), then three decode
  // steps of 10 ms: TTFT 30 ms, end to end 60 ms, whatever the arrival time.
  const std::vector<ReplayRequest> list = {{"mom", "voice", 0.5, 20, 4}};
  auto cost = Cost(0.010, 0.001, 0);
  auto run = RunSimulated(SmallEngine("fifo"), *cost, list, {4});
  REQUIRE(run.ok());
  REQUIRE(run->requests.size() == 1);
  CHECK(run->requests[0].ttft == Approx(0.030));
  CHECK(run->requests[0].e2e == Approx(0.060));
  CHECK(run->output_tokens[0] == 4);
  REQUIRE(run->steps.size() == 4);
  CHECK(run->steps[0].prefill == 20);
  CHECK(run->steps[1].decodes == 1);
  CHECK(run->seconds == Approx(0.560));
}

TEST_CASE("Simulated replays are deterministic and compare to themselves with no error",
          "[fidelity]") {
  auto list = MakeReplayWorkload({.horizon_s = 6});
  REQUIRE(list.ok());
  std::vector<int32_t> lengths;
  for (const ReplayRequest& r : *list) lengths.push_back(r.max_new_tokens);
  auto cost = Cost(0.003, 0.001, 0.002);
  for (const char* policy : {"fifo", "household"}) {
    auto a = RunSimulated(SmallEngine(policy), *cost, *list, lengths);
    auto b = RunSimulated(SmallEngine(policy), *cost, *list, lengths);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(a->requests.size() == list->size());
    CHECK(a->steps.size() == b->steps.size());
    auto c = CompareRequests(a->requests, b->requests);
    REQUIRE(c.ok());
    CHECK(c->ttft.max == 0);
    CHECK(c->e2e.max == 0);
    for (const RequestLatency& r : a->requests) {
      CHECK(r.ttft > 0);
      CHECK(r.e2e >= r.ttft);
      CHECK(a->output_tokens[r.index] == lengths[r.index]);
    }
  }
}

TEST_CASE("The replay's classes carry the household TTFT targets", "[fidelity]") {
  auto o = ReplaySchedulerOptions("household");
  REQUIRE(o.ok());
  REQUIRE(o->work_classes.size() == ReplayClasses().size());
  for (const WorkClassConfig& c : o->work_classes) {
    CHECK(c.ttft_slo < absl::InfiniteDuration());
  }
  CHECK(o->work_classes[0].name == "voice");
  CHECK(o->work_classes[0].ttft_slo < o->work_classes[2].ttft_slo);
}

TEST_CASE("In the simulator household serves voice ahead of the agent bursts", "[fidelity]") {
  // Step costs about the wide CPU model's: the bursts' prefills fill the
  // step budget for a second, and a voice question arriving then waits for
  // them under FIFO only.
  auto list = MakeReplayWorkload({});
  REQUIRE(list.ok());
  std::vector<int32_t> lengths;
  for (const ReplayRequest& r : *list) lengths.push_back(r.max_new_tokens);
  auto cost = Cost(0.004, 0.00064, 0.00063);
  auto fifo = RunSimulated(SmallEngine("fifo"), *cost, *list, lengths);
  auto household = RunSimulated(SmallEngine("household"), *cost, *list, lengths);
  REQUIRE(fifo.ok());
  REQUIRE(household.ok());
  CHECK(ClassTtftQuantile(household->requests, "voice", 0.9) <
        0.8 * ClassTtftQuantile(fifo->requests, "voice", 0.9));
}

TEST_CASE("ReplaySchedulerOptions refuses an unknown policy", "[fidelity]") {
  CHECK(!ReplaySchedulerOptions("no-such-policy").ok());
}

}  // namespace
}  // namespace hearth::fidelity

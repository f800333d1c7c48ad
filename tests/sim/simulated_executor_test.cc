#include "hearth/sim/simulated_executor.h"

#include <catch2/catch.hpp>

#include "hearth/sim/fitted_cost_model.h"

namespace hearth {
namespace {

std::unique_ptr<FittedCostModel> Model() {
  FittedCoefficients c;
  c.c0 = 0.001;   // 1 ms per step
  c.c1 = 1e-5;    // 10 us per prefill token
  c.c3 = 1e-4;    // 100 us per decode
  c.host_link_bandwidth = 1e9;
  return std::move(*FittedCostModel::Create(c));
}

ScheduledSequence Seq(uint64_t id, int32_t start, int32_t n, bool sample,
                      bool decode = false) {
  ScheduledSequence s;
  s.id = RequestId(id);
  s.start_position = start;
  s.num_tokens = n;
  s.sample = sample;
  s.decode = decode;
  return s;
}

TEST_CASE("executor prices plans and stops at the hidden length", "[sim]") {
  auto model = Model();
  SimulatedExecutor exec(model.get(), 16, 1000);
  REQUIRE(exec.SetOutputLength(RequestId(1), 2).ok());
  REQUIRE(exec.SetOutputLength(RequestId(2), 5).ok());
  CHECK(absl::IsInvalidArgument(exec.SetOutputLength(RequestId(3), 0)));

  StepPlan plan;
  plan.step = 1;
  plan.now = absl::UnixEpoch() + absl::Seconds(10);
  plan.sequences = {Seq(1, 0, 100, true), Seq(2, 0, 50, false)};
  StepOutcome out;
  REQUIRE(exec.Execute(plan, &out).ok());
  // 1 ms + 150 prefill tokens * 10 us = 2.5 ms.
  CHECK(exec.last_step_time() == absl::Microseconds(2500));
  CHECK(out.completed_at == plan.now + absl::Microseconds(2500));
  REQUIRE(out.sequences.size() == 2);
  CHECK(out.step == 1);
  CHECK(out.sequences[0].produced_token);
  CHECK(out.sequences[0].finish == FinishReason::kNone);
  CHECK_FALSE(out.sequences[1].produced_token);

  plan.step = 2;
  plan.sequences = {Seq(1, 100, 1, true, /*decode=*/true), Seq(2, 50, 1, true)};
  plan.swap_out = {BlockCopy{}, BlockCopy{}};  // 2 blocks * 16 KB over 1 GB/s
  REQUIRE(exec.Execute(plan, &out).ok());
  // 1 ms + one decode (100 us) + one prefill token (10 us: request 2 has no
  // token yet, so its step is the end of its prefill) + 32 us of copies.
  CHECK(exec.last_step_time() == absl::Microseconds(1000 + 100 + 10 + 32));
  CHECK(out.sequences[0].finish == FinishReason::kStopToken);
  CHECK(out.sequences[1].finish == FinishReason::kNone);

  plan.step = 3;
  plan.swap_out.clear();
  plan.released = {{RequestId(1)}};
  plan.sequences = {Seq(9, 0, 4, true)};
  REQUIRE(exec.Execute(plan, &out).ok());
  CHECK_THAT(out.sequences[0].error, Catch::Contains("request 9"));
  CHECK(exec.tracked() == 1);
}

}  // namespace
}  // namespace hearth

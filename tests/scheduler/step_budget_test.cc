// StepBudget (src/scheduler/step_budget.h): the fitted step-time line and
// the budget it allows for a TPOT target.

#include "scheduler/step_budget.h"

#include <cstdint>
#include <random>

#include <catch2/catch.hpp>

#include "tests/testing/scheduler_harness.h"

namespace hearth::internal {
namespace {

TEST_CASE("StepBudget: no cut without a target or before a slope is known", "[scheduler]") {
  StepBudget b{StepTimeModel{}};
  CHECK(b.TokensFor(absl::InfiniteDuration(), 2048, 16) == 2048);
  CHECK(b.TokensFor(absl::Milliseconds(50), 2048, 16) == 2048);
  // Decode-only steps of one size say nothing about prefill cost.
  for (int i = 0; i < 100; ++i) b.Observe(40, absl::Milliseconds(25));
  CHECK(b.TokensFor(absl::Milliseconds(50), 2048, 16) == 2048);
}

TEST_CASE("StepBudget: a fitted line keeps any target, between floor and max", "[scheduler]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const double fixed_ms = 5 + rng() % 30, per_token_us = 50 + rng() % 400;
    StepBudget b{StepTimeModel{}};
    for (int i = 0; i < 500; ++i) {
      const int32_t tokens = 1 + static_cast<int32_t>(rng() % 4096);
      b.Observe(tokens, absl::Microseconds(fixed_ms * 1000 + per_token_us * tokens));
    }
    for (int target_ms : {10, 60, 150, 2000}) {
      CAPTURE(trial, fixed_ms, per_token_us, target_ms);
      const int32_t got = b.TokensFor(absl::Milliseconds(target_ms), 2048, 64);
      CHECK(got >= 64);
      CHECK(got <= 2048);
      const double predicted_ms = fixed_ms + per_token_us * got / 1000;
      // Within the target unless held up by the floor, and not needlessly
      // small: one token more would break it or hit the cap.
      if (got > 64) CHECK(predicted_ms <= target_ms + 1e-6);
      if (got < 2048) CHECK(fixed_ms + per_token_us * (got + 1) / 1000 > target_ms - 1e-6);
    }
  }
}

TEST_CASE("StepBudget: the host's line is used as given", "[scheduler]") {
  StepBudget b{StepTimeModel{.fixed = absl::Milliseconds(20),
                             .per_token = absl::Microseconds(100)}};
  b.Observe(1000, absl::Seconds(5));  // ignored
  CHECK(b.TokensFor(absl::Milliseconds(100), 2048, 16) == 800);
}

TEST_CASE("Steps stay within the budget of the tightest running TPOT target", "[scheduler]") {
  SchedulerOptions o;
  o.max_batched_tokens = 1024;
  o.work_classes = {{.name = "interactive", .tpot_slo = absl::Milliseconds(100)},
                    {.name = "batch"}};
  o.step_time_model = {.fixed = absl::Milliseconds(20), .per_token = absl::Milliseconds(1)};
  auto h = testing::SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  testing::SchedulerHarness& harness = **h;
  RequestSpec spec;
  spec.prompt_tokens = 900;
  spec.max_new_tokens = 8;
  spec.work_class = WorkClassId(1);
  REQUIRE(harness.Submit(spec).ok());
  REQUIRE(harness.Step().ok());
  // Only the batch class runs: the whole budget.
  CHECK(harness.last_plan().num_batched_tokens == 900);
  spec.work_class = WorkClassId(0);
  REQUIRE(harness.Submit(spec).ok());
  for (int i = 0; i < 4; ++i) {
    REQUIRE(harness.Step().ok());
    // (100 ms - 20 ms) / 1 ms per token, once the interactive request runs.
    if (i > 0) CHECK(harness.last_plan().num_batched_tokens <= 80);
  }
}

}  // namespace
}  // namespace hearth::internal

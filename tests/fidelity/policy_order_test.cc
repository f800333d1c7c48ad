#include "bench/fidelity/policy_order.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

namespace hearth::fidelity {
namespace {

TEST_CASE("JudgeOrder: real runs apart and the simulator agreeing is the same order",
          "[fidelity]") {
  const std::vector<double> fifo = {2.6, 2.7, 2.5}, household = {0.44, 0.41, 0.47};
  auto o = JudgeOrder(fifo, household, 0.54, 0.20, 0.05);
  REQUIRE(o.ok());
  CHECK(o->real == Order::kSecondBetter);
  CHECK(o->sim == Order::kSecondBetter);
  CHECK(o->same());
  // household's range (0.06 / 0.44) is wider than fifo's (0.2 / 2.6)
  CHECK(o->real_spread == Approx(0.06 / 0.44));
  CHECK(o->band == Approx(0.06 / 0.44));
  auto swapped = JudgeOrder(household, fifo, 0.20, 0.54, 0.05);
  REQUIRE(swapped.ok());
  CHECK(swapped->real == Order::kFirstBetter);
  CHECK(swapped->same());
}

TEST_CASE("JudgeOrder: overlapping real runs are a tie, and only a tie in the simulator matches",
          "[fidelity]") {
  const std::vector<double> a = {1.00, 1.10, 1.05}, b = {1.08, 0.98, 1.02};
  // The real spread is b's, 0.1 / 1.02; a simulated 6% difference lies within it.
  auto tie = JudgeOrder(a, b, 1.06, 1.00, 0.05);
  REQUIRE(tie.ok());
  CHECK(tie->real == Order::kTie);
  CHECK(tie->band == Approx(0.1 / 1.02));
  CHECK(tie->sim == Order::kTie);
  CHECK(tie->same());
  // A simulated difference beyond what the real runs could resolve is a different order.
  auto apart = JudgeOrder(a, b, 1.5, 1.0, 0.05);
  REQUIRE(apart.ok());
  CHECK(apart->sim == Order::kSecondBetter);
  CHECK(!apart->same());
}

TEST_CASE("JudgeOrder: ranges that do not overlap but lie within the floor are a tie",
          "[fidelity]") {
  auto o = JudgeOrder(std::vector<double>{1.00, 1.01}, std::vector<double>{1.02, 1.03}, 1.0, 1.2,
                      0.05);
  REQUIRE(o.ok());
  CHECK(o->real == Order::kTie);
  CHECK(o->band == Approx(0.05));  // the floor: the runs' spread is about 1%
  CHECK(o->sim == Order::kFirstBetter);
  CHECK(!o->same());
}

TEST_CASE("JudgeOrder: one run each falls back to OrderOf with the floor", "[fidelity]") {
  auto o = JudgeOrder(std::vector<double>{1.395}, std::vector<double>{1.376}, 1.455, 1.374, 0.05);
  REQUIRE(o.ok());
  CHECK(o->real == Order::kTie);
  CHECK(o->real_spread == 0);
  CHECK(o->sim == Order::kSecondBetter);  // 5.6% apart, beyond the 5% floor
  CHECK(!o->same());
}

TEST_CASE("JudgeOrder refuses empty runs, non-positive values and a bad floor", "[fidelity]") {
  const std::vector<double> ok = {1.0}, none = {};
  CHECK(JudgeOrder(none, ok, 1, 1, 0.05).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(!JudgeOrder(ok, none, 1, 1, 0.05).ok());
  CHECK(!JudgeOrder(std::vector<double>{0.0}, ok, 1, 1, 0.05).ok());
  CHECK(!JudgeOrder(ok, std::vector<double>{std::nan("")}, 1, 1, 0.05).ok());
  CHECK(!JudgeOrder(ok, ok, 0, 1, 0.05).ok());
  CHECK(!JudgeOrder(ok, ok, 1, INFINITY, 0.05).ok());
  auto bad = JudgeOrder(ok, ok, 1, 1, 1.0);
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("min_band") != std::string::npos);
}

}  // namespace
}  // namespace hearth::fidelity

// The calibration fit: recovers known coefficients, keeps them non-negative,
// rejects bad input, and writes a profile the simulator's loader accepts.

#include "exec/step_cost_fit.h"

#include <catch2/catch.hpp>
#include <vector>

#ifdef HEARTH_EXEC_TESTS_HAVE_SIM
#include "hearth/sim/fitted_cost_model.h"
#endif

namespace hearth::exec_internal {
namespace {

std::vector<StepCostSample> Grid(const StepCostFit& truth, double noise) {
  std::vector<StepCostSample> out;
  int i = 0;
  for (double p : {0.0, 64.0, 256.0, 1024.0, 2048.0}) {
    for (double d : {0.0, 1.0, 32.0, 256.0}) {
      for (double ctx : {512.0, 4096.0}) {
        if (p == 0 && d == 0) continue;
        StepCostSample s{p, d, d * ctx + p, 0};
        // Deterministic +-noise pattern.
        const double wiggle = ((i++ * 7) % 5 - 2) / 2.0 * noise;
        s.seconds = truth.Predict(s) * (1.0 + wiggle);
        out.push_back(s);
      }
    }
  }
  return out;
}

TEST_CASE("The fit recovers exact coefficients", "[exec][calibration]") {
  StepCostFit truth;
  truth.c = {5e-3, 1.1e-4, 2e-9, 4e-5, 1.3e-7};
  const auto samples = Grid(truth, 0.0);
  absl::StatusOr<StepCostFit> fit = FitStepCost(samples);
  REQUIRE(fit.ok());
  for (int j = 0; j < 5; ++j) {
    CHECK(fit->c[j] == Approx(truth.c[j]).epsilon(1e-6));
  }
  CHECK(FitError(*fit, samples).max < 1e-9);
}

TEST_CASE("Noisy data fits within the noise, coefficients stay >= 0",
          "[exec][calibration]") {
  StepCostFit truth;
  truth.c = {5e-3, 1.1e-4, 0.0, 4e-5, 1.3e-7};
  const auto samples = Grid(truth, 0.04);
  absl::StatusOr<StepCostFit> fit = FitStepCost(samples);
  REQUIRE(fit.ok());
  for (double c : fit->c) CHECK(c >= 0.0);
  CHECK(FitError(*fit, samples).max < 0.06);
}

TEST_CASE("A term that would come out negative is dropped", "[exec][calibration]") {
  // Time falls with decode batch: impossible for the model, so c3 -> 0.
  std::vector<StepCostSample> s;
  int i = 0;
  for (double p : {0.0, 100.0, 200.0, 400.0}) {
    for (double d : {1.0, 4.0, 16.0}) {
      const double k = d * 300 + p + 37.0 * ((i++ * 3) % 4);
      s.push_back({p, d, k, 0.01 + 1e-5 * p + 1e-7 * k - 2e-4 * d});
    }
  }
  absl::StatusOr<StepCostFit> fit = FitStepCost(s);
  REQUIRE(fit.ok());
  for (double c : fit->c) CHECK(c >= 0.0);
  CHECK(fit->c[3] == 0.0);
}

TEST_CASE("Bad samples are rejected", "[exec][calibration]") {
  std::vector<StepCostSample> few(3, {1, 1, 1, 1});
  CHECK(absl::IsInvalidArgument(FitStepCost(few).status()));
  std::vector<StepCostSample> zero(6, {1, 1, 1, 1});
  zero[2].seconds = 0;
  CHECK(absl::IsInvalidArgument(FitStepCost(zero).status()));
  // Every sample identical: P, D and K cannot be told apart.
  std::vector<StepCostSample> same(6, {10, 2, 30, 0.01});
  CHECK(absl::IsInvalidArgument(FitStepCost(same).status()));
}

TEST_CASE("The profile is in the simulator's format", "[exec][calibration]") {
  StepCostFit fit;
  fit.c = {5.2e-3, 1.1e-4, 2e-9, 4e-5, 1.3e-7};
  ProfileInfo info;
  info.gpu = "NVIDIA H200";
  info.model = "Llama-3.1-8B shape \"random\"";
  info.comments = {"test profile"};
  info.host_link_bandwidth = 25e9;
  info.memory_bandwidth = 4.3e12;
  const std::string text = FormatStepCostProfile(fit, info);
  CHECK_THAT(text, Catch::Contains("[fitted]"));
  CHECK_THAT(text, Catch::Contains("c2 = 2.000000e-09"));
#ifdef HEARTH_EXEC_TESTS_HAVE_SIM
  auto model = FittedCostModel::ParseProfile(text, "test.toml");
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  CHECK((*model)->coefficients().c0 == Approx(5.2e-3));
  CHECK((*model)->coefficients().c4 == Approx(1.3e-7));
  CHECK((*model)->coefficients().memory_bandwidth == Approx(4.3e12));
  CHECK((*model)->coefficients().gpu == "NVIDIA H200");
#else
  WARN("hearth_sim not built: profile not parsed by FittedCostModel");
#endif
}

}  // namespace
}  // namespace hearth::exec_internal

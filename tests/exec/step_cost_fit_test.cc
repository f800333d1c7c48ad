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

TEST_CASE("The fit learns what a photo's encoding costs, and nothing without photos",
          "[exec][calibration][multimodal]") {
  StepCostFit truth;
  truth.c = {5e-3, 1.1e-4, 2e-9, 4e-5, 1.3e-7, 0, 3e-5};
  std::vector<StepCostSample> samples = Grid(truth, 0.0);
  absl::StatusOr<StepCostFit> text_only = FitStepCost(samples);
  REQUIRE(text_only.ok());
  CHECK(text_only->c[6] == 0.0);
  // Steps that also encode photos of 576 positions, one or two at a time.
  for (StepCostSample s : Grid(truth, 0.0)) {
    for (double e : {576.0, 1152.0}) {
      s.encoder_tokens = e;
      s.seconds = truth.Predict(s);
      samples.push_back(s);
    }
  }
  absl::StatusOr<StepCostFit> fit = FitStepCost(samples);
  REQUIRE(fit.ok());
  CHECK(fit->c[6] == Approx(truth.c[6]).epsilon(1e-6));
  CHECK(fit->c[1] == Approx(truth.c[1]).epsilon(1e-6));
  CHECK(FitError(*fit, samples).max < 1e-9);
#ifdef HEARTH_EXEC_TESTS_HAVE_SIM
  // The profile carries it, and the simulator prices it as the fit does.
  auto model = FittedCostModel::ParseProfile(FormatStepCostProfile(*fit, {}), "photos.toml");
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  CHECK((*model)->coefficients().c6 == Approx(truth.c[6]).epsilon(1e-6));
  const std::vector<SequenceWork> work = {{0, 600, false}};
  const double with = absl::ToDoubleSeconds(
      (*model)->StepTime({.sequences = work, .encoder_tokens = 576}));
  const double without = absl::ToDoubleSeconds((*model)->StepTime({.sequences = work}));
  CHECK(with - without == Approx(576 * truth.c[6]).epsilon(1e-4));
#endif
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

// A CPU backend's shape: a lone decode is cheap (matrix-vector), two to
// five cost a flat step more, eight more again; the rest is linear.
StepCostFit BucketTruth() {
  StepCostFit truth;
  truth.c = {0, 1.1e-3, 0, 2e-4, 3e-6};
  truth.base_by_tokens = {3e-3, 9e-3, 9.5e-3, 9.5e-3, 1e-2, 1.1e-2, 1.3e-2, 1.6e-2};
  return truth;
}

std::vector<StepCostSample> BucketGrid(const StepCostFit& truth, bool skip_five) {
  std::vector<StepCostSample> out;
  for (double d = 1; d <= 8; ++d) {
    if (skip_five && d == 5) continue;
    for (double ctx : {24.0, 128.0, 320.0}) {
      StepCostSample s{0, d, d * (ctx + 1), 0};
      s.seconds = truth.Predict(s);
      out.push_back(s);
    }
  }
  for (double d : {0.0, 1.0, 4.0, 8.0}) {
    for (double p : {8.0, 32.0, 120.0}) {
      StepCostSample s{p, d, d * 129 + p + 192, 0};
      s.seconds = truth.Predict(s);
      out.push_back(s);
    }
  }
  return out;
}

TEST_CASE("The fit recovers attention over the whole cache span (T x K)", "[exec][calibration]") {
  StepCostFit truth;
  truth.c = {1e-3, 1e-5, 0, 2e-5, 1e-7, 3e-9};
  const auto samples = Grid(truth, 0.0);
  absl::StatusOr<StepCostFit> fit = FitStepCost(samples);
  REQUIRE(fit.ok());
  CHECK(fit->c[5] == Approx(truth.c[5]).epsilon(1e-6));
  CHECK(FitError(*fit, samples).max < 1e-9);
}

TEST_CASE("The fit by token count recovers a batch-size step function", "[exec][calibration]") {
  const StepCostFit truth = BucketTruth();
  const auto samples = BucketGrid(truth, /*skip_five=*/false);
  absl::StatusOr<StepCostFit> fit = FitStepCost(samples, 8);
  INFO(fit.status().ToString());
  REQUIRE(fit.ok());
  REQUIRE(fit->base_by_tokens.size() == 8);
  for (size_t t = 0; t < 8; ++t) {
    INFO("T = " << t + 1);
    CHECK(fit->base_by_tokens[t] == Approx(truth.base_by_tokens[t]).epsilon(1e-6));
  }
  CHECK(fit->c[0] == 0.0);
  CHECK(fit->c[1] == Approx(truth.c[1]).epsilon(1e-6));
  CHECK(FitError(*fit, samples).max < 1e-9);
  // The linear model cannot follow it.
  absl::StatusOr<StepCostFit> linear = FitStepCost(samples);
  REQUIRE(linear.ok());
  CHECK(linear->base_by_tokens.empty());
  CHECK(FitError(*linear, samples).max > 0.2);
}

TEST_CASE("A token count without samples is interpolated", "[exec][calibration]") {
  const StepCostFit truth = BucketTruth();
  absl::StatusOr<StepCostFit> fit = FitStepCost(BucketGrid(truth, /*skip_five=*/true), 8);
  REQUIRE(fit.ok());
  CHECK(fit->base_by_tokens[4] == Approx((truth.base_by_tokens[3] + truth.base_by_tokens[5]) / 2));
  CHECK(absl::IsInvalidArgument(FitStepCost(BucketGrid(truth, false), -1).status()));
  CHECK(absl::IsInvalidArgument(FitStepCost(BucketGrid(truth, false), kMaxBatchBuckets + 1).status()));
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
  CHECK((*model)->coefficients().base_by_tokens.empty());
  // With a table by token count, the simulator prices steps as the fit does.
  const StepCostFit bucketed = BucketTruth();
  auto with_table = FittedCostModel::ParseProfile(FormatStepCostProfile(bucketed, info), "b.toml");
  INFO(with_table.status().ToString());
  REQUIRE(with_table.ok());
  REQUIRE((*with_table)->coefficients().base_by_tokens.size() == 8);
  for (const StepCostSample& s : BucketGrid(bucketed, false)) {
    std::vector<SequenceWork> work;
    for (int d = 0; d < s.decode_seqs; ++d) work.push_back({128, 1, true});
    if (s.prefill_tokens > 0) work.push_back({192, static_cast<int32_t>(s.prefill_tokens), false});
    StepCostSample priced = s;
    priced.kv_context = s.decode_seqs * 129 + (s.prefill_tokens > 0 ? s.prefill_tokens + 192 : 0);
    CHECK(absl::ToDoubleSeconds((*with_table)->StepTime({.sequences = work})) ==
          Approx(bucketed.Predict(priced)).epsilon(1e-6));
  }
#else
  WARN("hearth_sim not built: profile not parsed by FittedCostModel");
#endif
}

}  // namespace
}  // namespace hearth::exec_internal

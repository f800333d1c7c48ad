#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "hearth/sim/fitted_cost_model.h"
#include "hearth/sim/gpu_catalog.h"
#include "hearth/sim/model_catalog.h"
#include "hearth/sim/roofline_cost_model.h"

namespace hearth {
namespace {

std::unique_ptr<RooflineCostModel> Roofline(const char* gpu, const char* model,
                                            RooflineOptions o = {}) {
  auto g = FindGpu(gpu);
  auto m = FindModelSpec(model);
  REQUIRE(g.ok());
  REQUIRE(m.ok());
  auto r = RooflineCostModel::Create(*g, *m, o);
  REQUIRE(r.ok());
  return std::move(*r);
}

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

double DecodeMs(const StepCostModel& m, int batch, int context) {
  std::vector<SequenceWork> w(batch, SequenceWork{context, 1, true});
  return Ms(m.StepTime({.sequences = w}));
}

TEST_CASE("catalogues hold the required entries with sane figures", "[sim]") {
  for (const char* name :
       {"H200", "H100 SXM", "A100-80GB", "L4", "RTX 4090", "RTX 3090", "A10G"}) {
    auto g = FindGpu(name);
    REQUIRE(g.ok());
    CHECK(g->memory_bandwidth > 1e11);
    CHECK(g->bf16_flops > 1e13);
    CHECK(g->memory_bytes >= int64_t{20} << 30);
  }
  CHECK(FindGpu("rtx4090").ok());
  CHECK(absl::IsNotFound(FindGpu("TPU").status()));
  CHECK_THAT(std::string(FindGpu("TPU").status().message()),
             Catch::Contains("RTX 3090"));
  for (const char* name : {"Llama-3.1-8B", "Qwen2.5-7B", "Llama-3.2-3B",
                           "Mistral-7B", "Llama-2-7B", "bge-small-en-v1.5"}) {
    CHECK(FindModelSpec(name).ok());
  }
  // 32 layers * 8 KV heads * 128 * (K and V) * 2 bytes.
  CHECK(FindModelSpec("llama 3.1 8b")->KvBytesPerToken() == 131072);
  CHECK(FindModelSpec("Qwen2.5-7B")->KvBytesPerToken() == 28 * 4 * 128 * 2 * 2);
  // No GQA: 32 KV heads, four times Llama-3.1-8B's KV per token.
  CHECK(FindModelSpec("Llama-2-7B")->KvBytesPerToken() == 32 * 32 * 128 * 2 * 2);
  CHECK_FALSE(FindModelSpec("bge-small-en-v1.5")->generative);
}

TEST_CASE("8B BF16 decode on H200 costs weights over bandwidth", "[sim]") {
  auto m = Roofline("H200", "Llama-3.1-8B");
  // 8.03e9 params * 2 bytes / 4.8e12 B/s = 3.346 ms, plus 1 token of KV.
  const double expected = (8'030'261'248.0 * 2 + 131072.0) / 4.8e12 * 1e3;
  CHECK(DecodeMs(*m, 1, 0) == Approx(expected).epsilon(1e-6));
  CHECK(DecodeMs(*m, 1, 0) == Approx(3.3).epsilon(0.02));
  // A 4096-token context adds its KV read: 4096 * 128 KiB = 0.54 GB.
  CHECK(DecodeMs(*m, 1, 4096) ==
        Approx((8'030'261'248.0 * 2 + 4097 * 131072.0) / 4.8e12 * 1e3)
            .epsilon(1e-6));
}

TEST_CASE("roofline is monotone in batch and context", "[sim]") {
  auto m = Roofline("RTX 4090", "Llama-3.1-8B");
  double prev = 0;
  for (int batch : {1, 2, 8, 32, 128, 256}) {
    const double t = DecodeMs(*m, batch, 1024);
    CHECK(t > prev);
    prev = t;
  }
  prev = 0;
  for (int context : {0, 512, 2048, 8192, 32768}) {
    const double t = DecodeMs(*m, 16, context);
    CHECK(t > prev);
    prev = t;
  }
}

TEST_CASE("long prefill is compute bound and charges attention", "[sim]") {
  auto m = Roofline("H100 SXM", "Llama-3.1-8B");
  std::vector<SequenceWork> w = {{0, 2048, false}};
  StepWork work{.sequences = w};
  const double linear = 2.0 * 8'030'261'248.0 * 2048;
  const double attention = 4.0 * 32 * 32 * 128 * (2048.0 * 2049 / 2);
  CHECK(m->Flops(work) == Approx(linear + attention));
  CHECK(Ms(m->StepTime(work)) ==
        Approx((linear + attention) / 989.5e12 * 1e3).epsilon(1e-6));
  // Efficiencies and overhead add up as documented.
  RooflineOptions o;
  o.compute_efficiency = 0.5;
  o.step_overhead = absl::Milliseconds(1);
  auto slow = Roofline("H100 SXM", "Llama-3.1-8B", o);
  CHECK(Ms(slow->StepTime(work)) ==
        Approx(2 * (linear + attention) / 989.5e12 * 1e3 + 1).epsilon(1e-6));
  CHECK(slow->StepTime({}) == absl::ZeroDuration());
}

TEST_CASE("roofline rejects bad options", "[sim]") {
  RooflineOptions o;
  o.compute_efficiency = 0;
  CHECK(absl::IsInvalidArgument(
      RooflineCostModel::Create(*FindGpu("L4"), *FindModelSpec("Mistral-7B"), o)
          .status()));
  o = {};
  o.step_overhead = -absl::Milliseconds(1);
  CHECK(absl::IsInvalidArgument(
      RooflineCostModel::Create(*FindGpu("L4"), *FindModelSpec("Mistral-7B"), o)
          .status()));
}

TEST_CASE("fitted model evaluates its formula from a profile", "[sim]") {
  auto m = FittedCostModel::ParseProfile(R"(
# a profile
[fitted]
gpu = "RTX 4090"
model = "Llama-3.1-8B"
c0 = 0.005
c1 = 1e-4
c2 = 1e-8
c3 = 5e-5
c4 = 1e-7
)",
                                         "p.toml");
  REQUIRE(m.ok());
  // Prefill 100 at context 0, two decodes at contexts 50 and 70:
  // P = 100, D = 2, K = 100 + 51 + 71 = 222.
  std::vector<SequenceWork> w = {{0, 100, false}, {50, 1, true}, {70, 1, true}};
  const double expected =
      0.005 + 1e-4 * 100 + 1e-8 * 100 * 100 + 5e-5 * 2 + 1e-7 * 222;
  CHECK(absl::ToDoubleSeconds((*m)->StepTime({.sequences = w})) ==
        Approx(expected).epsilon(1e-9));
  CHECK((*m)->StepTime({}) == absl::ZeroDuration());
}

TEST_CASE("fitted base_by_tokens prices a step by the tokens it computes", "[sim]") {
  auto m = FittedCostModel::ParseProfile(R"(
[fitted]
c0 = 0.001
c1 = 0
c2 = 0
c3 = 0
c4 = 0
base_by_tokens = [0.003, 0.010, 0.012]
)",
                                         "p.toml");
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  auto time = [&](std::vector<SequenceWork> w) {
    return absl::ToDoubleSeconds((*m)->StepTime({.sequences = w}));
  };
  CHECK(time({{10, 1, true}}) == Approx(0.004));
  CHECK(time({{10, 1, true}, {20, 1, true}}) == Approx(0.011));
  CHECK(time({{0, 64, false}}) == Approx(0.013));  // 64 tokens: the last entry
  // c5: every computed token attends over the step's whole KV context.
  auto span = FittedCostModel::ParseProfile(
      "[fitted]\nc0 = 0\nc1 = 0\nc2 = 0\nc3 = 0\nc4 = 0\nc5 = 1e-6\n", "s.toml");
  REQUIRE(span.ok());
  std::vector<SequenceWork> mixed = {{100, 1, true}, {20, 10, false}};  // T = 11, K = 101 + 30
  CHECK(absl::ToDoubleSeconds((*span)->StepTime({.sequences = mixed})) ==
        Approx(1e-6 * 11 * 131).epsilon(1e-6));
  for (const char* bad : {"base_by_tokens = [-0.001]", "base_by_tokens = 3",
                          "base_by_tokens = [\"x\"]"}) {
    INFO(bad);
    auto r = FittedCostModel::ParseProfile(
        absl::StrCat("[fitted]\nc0 = 0.001\nc1 = 0\nc2 = 0\nc3 = 0\nc4 = 0\n", bad, "\n"),
        "p.toml");
    CHECK(absl::IsInvalidArgument(r.status()));
    CHECK_THAT(std::string(r.status().message()), Catch::Contains("base_by_tokens"));
  }
  FittedCoefficients c;
  c.base_by_tokens.assign(257, 0.001);
  CHECK(absl::IsInvalidArgument(FittedCostModel::Create(c).status()));
}

TEST_CASE("fitted profile errors name file, line and key", "[sim]") {
  auto missing = FittedCostModel::ParseProfile("[fitted]\nc0 = 1\n", "p.toml");
  CHECK(absl::IsInvalidArgument(missing.status()));
  CHECK_THAT(std::string(missing.status().message()),
             Catch::Contains("fitted.c1"));
  auto negative = FittedCostModel::ParseProfile(
      "[fitted]\nc0 = 1\nc1 = 0\nc2 = 0\nc3 = -2\nc4 = 0\n", "p.toml");
  CHECK_THAT(std::string(negative.status().message()),
             Catch::Contains("p.toml:5: fitted.c3"));
  auto typo = FittedCostModel::ParseProfile(
      "[fitted]\nc0 = 1\nc1 = 0\nc2 = 0\nc3 = 0\nc4 = 0\nc7 = 1\n", "p.toml");
  CHECK_THAT(std::string(typo.status().message()),
             Catch::Contains("p.toml:7: fitted.c7: unknown key"));
  auto negative_c6 = FittedCostModel::ParseProfile(
      "[fitted]\nc0 = 1\nc1 = 0\nc2 = 0\nc3 = 0\nc4 = 0\nc6 = -1\n", "p.toml");
  CHECK_THAT(std::string(negative_c6.status().message()), Catch::Contains("p.toml:7: fitted.c6"));
  auto negative_c5 = FittedCostModel::ParseProfile(
      "[fitted]\nc0 = 1\nc1 = 0\nc2 = 0\nc3 = 0\nc4 = 0\nc5 = -1\n", "p.toml");
  CHECK_THAT(std::string(negative_c5.status().message()), Catch::Contains("p.toml:7: fitted.c5"));
  auto text = FittedCostModel::ParseProfile("[fitted]\nc0 = \"a\"\n", "p.toml");
  CHECK_THAT(std::string(text.status().message()),
             Catch::Contains("p.toml:2: fitted.c0: must be a number"));
  auto syntax = FittedCostModel::ParseProfile("[fitted\n", "p.toml");
  CHECK_THAT(std::string(syntax.status().message()), Catch::StartsWith("p.toml:1:"));
  CHECK(absl::IsNotFound(FittedCostModel::LoadProfile("/nonexistent").status()));
  auto zero = FittedCostModel::ParseProfile(
      "[fitted]\nc0 = 0\nc1 = 0\nc2 = 0\nc3 = 0\nc4 = 0\n", "p.toml");
  CHECK(absl::IsInvalidArgument(zero.status()));
}

}  // namespace
}  // namespace hearth

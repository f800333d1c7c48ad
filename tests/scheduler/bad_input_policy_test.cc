// Catalogue surface: the policies' configurations (VTC, priority with
// quota, MLFQ, the policy tree) through their validators and factories,
// and the registry's names.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/policy_registry.h"
#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {
namespace {

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

BadInputRow VtcRow(std::string name, std::function<void(VtcOptions&)> apply,
                   std::string message_has) {
  auto run = [apply = std::move(apply)] {
    VtcOptions vtc;
    apply(vtc);
    // The factory must refuse what the validator refuses, with its words.
    const absl::Status factory = VtcPolicyFactory(vtc).status();
    CHECK(factory == ValidateVtcOptions(vtc));
    return factory;
  };
  return {"policy: vtc " + name, std::move(run), kInvalid, std::move(message_has)};
}

std::vector<BadInputRow> VtcRows() {
  using V = VtcOptions&;
  return {
      VtcRow("prompt_token_weight -1", [](V v) { v.prompt_token_weight = -1; },
             "prompt_token_weight is -1"),
      VtcRow("prompt_token_weight NaN", [](V v) { v.prompt_token_weight = kNaN; },
             "prompt_token_weight is nan"),
      VtcRow("prompt_token_weight +inf", [](V v) { v.prompt_token_weight = kInf; },
             "prompt_token_weight is inf"),
      VtcRow("decode_token_weight -inf", [](V v) { v.decode_token_weight = -kInf; },
             "decode_token_weight is -inf"),
      VtcRow("decode_token_weight NaN", [](V v) { v.decode_token_weight = kNaN; },
             "decode_token_weight"),
      VtcRow("both token weights 0",
             [](V v) { v.prompt_token_weight = v.decode_token_weight = 0; }, "both 0"),
      VtcRow("admission_preemption_gap -1", [](V v) { v.admission_preemption_gap = -1; },
             "admission_preemption_gap is -1"),
      VtcRow("admission_preemption_gap NaN", [](V v) { v.admission_preemption_gap = kNaN; },
             "admission_preemption_gap"),
      VtcRow("admission_preemption_gap +inf", [](V v) { v.admission_preemption_gap = kInf; },
             "finite and >= 0"),
      VtcRow("a user weight of 0", [](V v) { v.user_weights = {1, 0}; }, "user_weights[1] is 0"),
      VtcRow("a negative user weight", [](V v) { v.user_weights = {-2}; }, "user_weights[0] is -2"),
      VtcRow("a NaN user weight", [](V v) { v.user_weights = {kNaN}; }, "finite and > 0"),
      VtcRow("100,000 user weights, the last NaN",
             [](V v) {
               v.user_weights.assign(100000, 1.0);
               v.user_weights.back() = kNaN;
             },
             "user_weights[99999] is nan"),
      VtcRow("an infinite user weight", [](V v) { v.user_weights = {1, 1, kInf}; },
             "user_weights[2] is inf"),
  };
}

BadInputRow PriorityRow(std::string name, std::function<void(PriorityQuotaOptions&)> apply,
                        std::string message_has) {
  auto run = [apply = std::move(apply)] {
    PriorityQuotaOptions p;
    apply(p);
    const absl::Status factory = PriorityQuotaPolicyFactory(p).status();
    CHECK(factory == ValidatePriorityQuotaOptions(p));
    return factory;
  };
  return {"policy: priority " + name, std::move(run), kInvalid, std::move(message_has)};
}

std::vector<BadInputRow> PriorityRows() {
  using P = PriorityQuotaOptions&;
  return {
      PriorityRow("aging_interval 0", [](P p) { p.aging_interval = absl::ZeroDuration(); },
                  "aging_interval is 0"),
      PriorityRow("aging_interval -1s", [](P p) { p.aging_interval = absl::Seconds(-1); },
                  "aging_interval is -1s"),
      PriorityRow("quota_window 0", [](P p) { p.quota_window = absl::ZeroDuration(); },
                  "quota_window is 0"),
      PriorityRow("quota_window InfiniteDuration",
                  [](P p) { p.quota_window = absl::InfiniteDuration(); }, "> 0 and finite"),
      PriorityRow("a quota of -1 tokens", [](P p) { p.quotas = {{.priority = 1, .tokens_per_window = -1}}; },
                  "quotas[0] has tokens_per_window -1"),
      PriorityRow("a share of 1.5", [](P p) { p.quotas = {{.priority = 1, .max_share = 1.5}}; },
                  "max_share in [0, 1]"),
      PriorityRow("a negative share", [](P p) { p.quotas = {{.priority = 1, .max_share = -0.1}}; },
                  "max_share -0.1"),
      PriorityRow("a NaN share", [](P p) { p.quotas = {{.priority = 1, .max_share = kNaN}}; },
                  "max_share nan"),
      PriorityRow("a quota with neither cap", [](P p) { p.quotas = {{.priority = 1}}; },
                  "at least one of them set"),
      PriorityRow("two quotas for one priority",
                  [](P p) {
                    p.quotas = {{.priority = 3, .tokens_per_window = 10},
                                {.priority = 3, .max_share = 0.5}};
                  },
                  "quotas[1] repeats priority 3"),
      PriorityRow("10,000 quotas, the last repeating the first",
                  [](P p) {
                    for (int32_t i = 0; i < 10000; ++i) p.quotas.push_back({.priority = i, .max_share = 0.5});
                    p.quotas.back().priority = 0;
                  },
                  "quotas[9999] repeats priority 0"),
  };
}

BadInputRow MlfqRow(std::string name, std::function<void(MlfqOptions&)> apply,
                    std::string message_has) {
  auto run = [apply = std::move(apply)] {
    MlfqOptions m;
    apply(m);
    const absl::Status factory = MlfqPolicyFactory(m).status();
    CHECK(factory == ValidateMlfqOptions(m));
    return factory;
  };
  return {"policy: mlfq " + name, std::move(run), kInvalid, std::move(message_has)};
}

std::vector<BadInputRow> MlfqRows() {
  using M = MlfqOptions&;
  return {
      MlfqRow("num_levels 0", [](M m) { m.num_levels = 0; }, "num_levels is 0"),
      MlfqRow("num_levels 33", [](M m) { m.num_levels = 33; }, "in [1, 32]"),
      MlfqRow("num_levels INT32_MIN", [](M m) { m.num_levels = kInt32Min; }, "num_levels"),
      MlfqRow("base_quantum 0", [](M m) { m.base_quantum = 0; }, "base_quantum is 0"),
      MlfqRow("base_quantum NaN", [](M m) { m.base_quantum = kNaN; }, "base_quantum"),
      MlfqRow("base_quantum +inf", [](M m) { m.base_quantum = kInf; }, "finite and > 0"),
      MlfqRow("prefill_token_cost -1", [](M m) { m.prefill_token_cost = -1; },
              "prefill_token_cost is -1"),
      MlfqRow("prefill_token_cost +inf", [](M m) { m.prefill_token_cost = kInf; },
              "prefill_token_cost"),
      MlfqRow("decode_token_cost NaN", [](M m) { m.decode_token_cost = kNaN; },
              "decode_token_cost"),
      MlfqRow("max_preemptions_per_step -1", [](M m) { m.max_preemptions_per_step = -1; },
              "max_preemptions_per_step is -1"),
      MlfqRow("starvation_bound 0", [](M m) { m.starvation_bound = absl::ZeroDuration(); },
              "starvation_bound is 0"),
      MlfqRow("starvation_bound -InfiniteDuration",
              [](M m) { m.starvation_bound = -absl::InfiniteDuration(); }, "starvation_bound"),
  };
}

BadInputRow TreeRow(std::string name, std::function<void(PolicyTreeConfig&)> apply,
                    std::string message_has) {
  auto run = [apply = std::move(apply)] {
    PolicyTreeConfig tree = HouseholdTreeConfig();
    apply(tree);
    const absl::Status factory = PolicyTreeFactory(tree).status();
    CHECK(factory == ValidatePolicyTreeConfig(tree));
    return factory;
  };
  return {"policy: tree " + name, std::move(run), kInvalid, std::move(message_has)};
}

std::vector<BadInputRow> TreeRows() {
  using T = PolicyTreeConfig&;
  return {
      TreeRow("with an empty name", [](T t) { t.name = ""; }, "PolicyTreeConfig::name is empty"),
      TreeRow("workflow_head_start -1s", [](T t) { t.workflow_head_start = absl::Seconds(-1); },
              "workflow_head_start is -1s"),
      TreeRow("a class weight of 0",
              [](T t) {
                t.class_level = ClassLevel::kWeightedShares;
                t.class_weights = {1, 0};
              },
              "class_weights[1] is 0"),
      TreeRow("a NaN class weight",
              [](T t) {
                t.class_level = ClassLevel::kWeightedShares;
                t.class_weights = {kNaN};
              },
              "class_weights[0]"),
      TreeRow("an invalid priority level",
              [](T t) { t.priority.aging_interval = absl::ZeroDuration(); }, "aging_interval"),
      TreeRow("an invalid user level", [](T t) { t.vtc.decode_token_weight = -1; },
              "decode_token_weight"),
      TreeRow("an invalid MLFQ request level",
              [](T t) {
                t.request_level = RequestLevel::kMlfq;
                t.mlfq.num_levels = 0;
              },
              "num_levels"),
  };
}

BadInputRow RegistryRow(std::string name, std::string policy,
                        std::function<void(PolicyConfig&)> apply, std::string message_has) {
  auto run = [policy = std::move(policy), apply = std::move(apply)] {
    PolicyConfig config;
    if (apply) apply(config);
    return MakePolicyFactory(policy, config).status();
  };
  return {"policy: registry " + name, std::move(run), kInvalid, std::move(message_has)};
}

std::vector<BadInputRow> RegistryRows() {
  using C = PolicyConfig&;
  return {
      RegistryRow("with an empty name", "", nullptr, "known policies: fifo, vtc"),
      RegistryRow("with a name in the wrong case", "FIFO", nullptr, "unknown policy \"FIFO\""),
      RegistryRow("with an unknown name", "lottery", nullptr, "household"),
      RegistryRow("vtc with an invalid configuration", "vtc",
                  [](C c) { c.vtc.prompt_token_weight = kNaN; }, "prompt_token_weight"),
      RegistryRow("priority with an invalid configuration", "priority",
                  [](C c) { c.priority.quota_window = absl::ZeroDuration(); }, "quota_window"),
      RegistryRow("mlfq with an invalid configuration", "mlfq",
                  [](C c) { c.mlfq.base_quantum = -1; }, "base_quantum"),
      RegistryRow("household with an invalid MLFQ level", "household",
                  [](C c) {
                    c.household_request_level = RequestLevel::kMlfq;
                    c.mlfq.num_levels = 99;
                  },
                  "num_levels is 99"),
      RegistryRow("household with a negative workflow head start", "household",
                  [](C c) { c.workflow_head_start = -absl::Seconds(5); }, "workflow_head_start"),
  };
}

}  // namespace

std::vector<BadInputRow> PolicyRows() {
  std::vector<BadInputRow> rows;
  for (auto part : {VtcRows, PriorityRows, MlfqRows, TreeRows, RegistryRows}) {
    for (BadInputRow& row : part()) rows.push_back(std::move(row));
  }
  return rows;
}

TEST_CASE("Bad input: policy configurations are refused by validator and factory alike",
          "[scheduler][bad_input]") {
  RunRows(PolicyRows());
}

}  // namespace hearth::catalogue

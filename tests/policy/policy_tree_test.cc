// Composition: the household tree and weighted shares between classes.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>

#include <catch2/catch.hpp>

#include "hearth/policy/policy_tree.h"
#include "tests/testing/policy_driver.h"

namespace hearth {
namespace {

using testing_policy::DriverOptions;
using testing_policy::PolicyDriver;

PolicyFactory Make(const PolicyTreeConfig& config) {
  absl::StatusOr<PolicyFactory> factory = PolicyTreeFactory(config);
  REQUIRE(factory.ok());
  return *factory;
}

double Weighted(const PolicyDriver& d, uint32_t user) {
  auto get = [user](const std::map<uint32_t, int64_t>& m) {
    auto it = m.find(user);
    return it == m.end() ? 0.0 : static_cast<double>(it->second);
  };
  return get(d.prefill_by_user()) + 2 * get(d.decode_by_user());
}

TEST_CASE("tree: priority -> VTC keeps users fair inside a level and levels ordered",
          "[policy][tree]") {
  PolicyTreeConfig config = HouseholdTreeConfig();
  config.class_level = ClassLevel::kPriority;
  config.priority.aging_interval = absl::InfiniteDuration();
  DriverOptions machine;
  machine.max_running = 8;
  machine.token_budget = 256;
  machine.max_chunk = 128;
  machine.kv_capacity_tokens = 1024;
  PolicyDriver d(Make(config), machine);
  // Users 0 and 1 share the chat level with very different request sizes;
  // user 2's voice requests come in a trickle and must never wait behind
  // chat.
  for (int i = 0; i < 200; ++i) {
    d.AddAt(0, {.user = 0, .prompt = 40, .max_new = 20, .priority = 2});
    d.AddAt(0, {.user = 1, .prompt = 300, .max_new = 150, .priority = 2});
  }
  for (int64_t s = 10; s < 1500; s += 25) {
    d.AddAt(s, {.user = 2, .prompt = 16, .max_new = 8, .priority = 4});
  }
  // VTC's bound with M the batch's KV capacity in tokens.
  double bound = 2 * std::max(1.0 * 300, 2.0 * machine.kv_capacity_tokens);
  double worst = 0;
  for (int s = 0; s < 1500; ++s) {
    d.Step();
    if (d.waiting_of_user(0) == 0 || d.waiting_of_user(1) == 0) break;
    // Voice takes a share of the machine, but equally from both chat users.
    worst = std::max(worst, std::abs(Weighted(d, 0) - Weighted(d, 1)));
  }
  CHECK(worst <= bound);
  int64_t longest_voice_wait = 0;
  for (const auto& [id, r] : d.requests()) {
    if (r.view.priority == 4 && r.first_admit_step >= 0) {
      longest_voice_wait = std::max(longest_voice_wait, r.longest_wait_steps);
    }
  }
  // A voice request preempts chat when the sequence cap is full.
  CHECK(longest_voice_wait <= 1);
  CHECK(d.errors().empty());
}

TEST_CASE("tree: weighted shares between classes", "[policy][tree]") {
  PolicyTreeConfig config;
  config.class_level = ClassLevel::kWeightedShares;
  config.user_level = UserLevel::kVtc;
  // The weights come from the tree's configuration or, without them, from
  // the scheduler's options (WorkClassConfig::weight); either way 1 : 3.
  SchedulerOptions options;
  options.work_classes = {{.name = "a"}, {.name = "b"}};
  const bool from_options = GENERATE(false, true);
  if (from_options) {
    options.work_classes[1].weight = 3;
  } else {
    config.class_weights = {1, 3};
  }
  INFO("weights from " << (from_options ? "the scheduler's options" : "the tree's config"));
  DriverOptions machine;
  machine.max_running = 8;
  machine.token_budget = 256;
  machine.max_chunk = 128;
  PolicyDriver d(Make(config), machine, options);
  // Class 0 is user 0's, class 1 is user 1's; both deeply backlogged.
  for (int i = 0; i < 1500; ++i) {
    d.AddAt(0, {.user = 0, .work_class = 0, .prompt = 64, .max_new = 32});
    d.AddAt(0, {.user = 1, .work_class = 1, .prompt = 64, .max_new = 32});
  }
  for (int s = 0; s < 4000; ++s) {
    d.Step();
    REQUIRE(d.waiting_of_user(0) > 0);
    REQUIRE(d.waiting_of_user(1) > 0);
  }
  double a = Weighted(d, 0), b = Weighted(d, 1);
  INFO("class shares " << a / (a + b) << " : " << b / (a + b));
  CHECK(std::abs((a / (a + b)) / 0.25 - 1) <= 0.05);
  CHECK(d.errors().empty());
}

TEST_CASE("tree: configuration is validated", "[policy][tree]") {
  PolicyTreeConfig config = HouseholdTreeConfig();
  CHECK(config.name == "household");
  CHECK(ValidatePolicyTreeConfig(config).ok());
  config.name = "";
  CHECK_FALSE(ValidatePolicyTreeConfig(config).ok());
  config = HouseholdTreeConfig();
  config.class_level = ClassLevel::kWeightedShares;
  config.class_weights = {1, -1};
  absl::Status bad = ValidatePolicyTreeConfig(config);
  CHECK(std::string(bad.message()).find("class_weights[1]") != std::string::npos);
  config = HouseholdTreeConfig();
  config.request_level = RequestLevel::kMlfq;
  config.mlfq.base_quantum = -1;
  CHECK_FALSE(PolicyTreeFactory(config).ok());
}

}  // namespace
}  // namespace hearth

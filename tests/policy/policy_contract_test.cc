// The policy side of the Policy contract, for every policy the registry
// builds and for the tree variants: randomized workloads on the real core
// with declines (classes at their limits), borrowed-capacity reclaims,
// cancellations, memory-pressure preemption and recompute, checked by
// PolicyDriver at every call (offers are undeclined waiting requests, victims
// are running and not the beneficiary, a candidate is offered whenever one
// waits), plus completion and determinism.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/policy_registry.h"
#include "hearth/policy/policy_tree.h"
#include "tests/testing/policy_driver.h"

namespace hearth {
namespace {

using testing_policy::DriverOptions;
using testing_policy::PolicyDriver;

PolicyConfig TestConfig() {
  PolicyConfig config;
  config.vtc.user_weights = {1, 2, 1, 3, 1};
  config.priority.aging_interval = absl::Milliseconds(200);
  config.priority.quota_window = absl::Milliseconds(500);
  config.priority.quotas = {{2, 3000}};
  config.mlfq.starvation_bound = absl::Milliseconds(400);
  config.mlfq.base_quantum = 16;
  return config;
}

// Every named policy plus tree shapes the registry does not name.
std::vector<std::pair<std::string, PolicyFactory>> AllPolicies() {
  std::vector<std::pair<std::string, PolicyFactory>> all;
  PolicyConfig config = TestConfig();
  for (std::string_view name : KnownPolicyNames()) {
    absl::StatusOr<PolicyFactory> f = MakePolicyFactory(name, config);
    REQUIRE(f.ok());
    all.emplace_back(std::string(name), *f);
  }
  config.household_request_level = RequestLevel::kMlfq;
  all.emplace_back("household+mlfq", *MakePolicyFactory("household", config));
  PolicyTreeConfig shares;
  shares.name = "shares";
  shares.class_level = ClassLevel::kWeightedShares;
  shares.class_weights = {1, 2, 4};
  shares.request_level = RequestLevel::kMlfq;
  all.emplace_back("shares", *PolicyTreeFactory(shares));
  return all;
}

std::unique_ptr<PolicyDriver> RandomRun(const PolicyFactory& factory,
                                        uint64_t seed) {
  DriverOptions machine;
  machine.max_running = 6;
  machine.token_budget = 128;
  machine.max_chunk = 48;
  machine.kv_capacity_tokens = 900;
  machine.recompute = seed % 2 == 0;
  machine.cancel_probability = 0.05;
  machine.seed = seed;
  // The core declines candidates for reasons particular to them: class 2
  // runs one sequence at a time and may not borrow, so its other requests
  // are declined while one runs; class 1 runs beyond its two only on idle
  // capacity, and is reclaimed (PickReclaimVictim) when others need it.
  SchedulerOptions classes;
  classes.work_classes = {{.name = "open"},
                          {.name = "borrowing", .max_running = 2},
                          {.name = "capped", .max_running = 1, .borrow = false}};
  auto d = std::make_unique<PolicyDriver>(factory, machine, classes);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 300; ++i) {
    int64_t at = std::uniform_int_distribution<int64_t>(0, 400)(rng);
    uint32_t user = std::uniform_int_distribution<uint32_t>(0, 4)(rng);
    int32_t priority = std::uniform_int_distribution<int32_t>(0, 2)(rng) * 2;
    uint32_t work_class = static_cast<uint32_t>(priority / 2);
    // Output before prompt: the order in which the old positional call's
    // arguments were evaluated (right to left, by GCC), so the workload of
    // each seed stays the same.
    const int32_t output = std::uniform_int_distribution<int32_t>(1, 60)(rng);
    const int32_t prompt = std::uniform_int_distribution<int32_t>(1, 200)(rng);
    d->AddAt(at, {.user = user,
                  .work_class = work_class,
                  .prompt = prompt,
                  .max_new = output,
                  .priority = priority});
  }
  d->Run(6000);
  return d;
}

TEST_CASE("policy contract: random workloads under every policy",
          "[policy][contract]") {
  for (const auto& [name, factory] : AllPolicies()) {
    for (uint64_t seed : {1, 2, 3, 4}) {
      INFO("policy " << name << " seed " << seed);
      std::unique_ptr<PolicyDriver> d = RandomRun(factory, seed);
      for (const std::string& e : d->errors()) UNSCOPED_INFO(e);
      CHECK(d->errors().empty());
      // The declined-candidate path was taken (and checked).
      CHECK(d->declines() > 0);
      // Everything ends: finished or cancelled, nothing stuck.
      CHECK(d->waiting_count() == 0);
      CHECK(d->running_count() == 0);
      // Same seed, same decisions.
      std::unique_ptr<PolicyDriver> again = RandomRun(factory, seed);
      bool same = true;
      for (const auto& [id, r] : d->requests()) {
        const auto& other = again->request(RequestId(id));
        same = same && r.first_admit_step == other.first_admit_step &&
               r.finish_step == other.finish_step;
      }
      CHECK(same);
    }
  }
}

TEST_CASE("policy contract: names reported and unknown names rejected",
          "[policy][contract]") {
  PolicyConfig config;
  for (std::string_view name : KnownPolicyNames()) {
    absl::StatusOr<PolicyFactory> f = MakePolicyFactory(name, config);
    REQUIRE(f.ok());
    CHECK((*f)(SchedulerOptions{})->name() == name);
  }
  absl::StatusOr<PolicyFactory> unknown = MakePolicyFactory("lottery", config);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == absl::StatusCode::kInvalidArgument);
  std::string message(unknown.status().message());
  CHECK(message.find("lottery") != std::string::npos);
  CHECK(message.find("fifo, vtc, priority, mlfq, household") != std::string::npos);
  // Invalid configuration is reported for the policy that uses it only.
  config.mlfq.num_levels = 0;
  CHECK(MakePolicyFactory("vtc", config).ok());
  absl::StatusOr<PolicyFactory> bad = MakePolicyFactory("mlfq", config);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("num_levels") != std::string::npos);
}

TEST_CASE("policy contract: reclaim and class-limit victims default to the "
          "core's order",
          "[policy][contract]") {
  std::vector<RequestView> borrowers(3);
  for (int i = 0; i < 3; ++i) borrowers[i].id = RequestId(10 + i);
  RequestView beneficiary;
  beneficiary.id = RequestId(1);
  for (const auto& [name, factory] : AllPolicies()) {
    INFO("policy " << name);
    std::unique_ptr<Policy> p = factory(SchedulerOptions{});
    // The newest borrower (listed last) is reclaimed first; none without
    // borrowers.
    CHECK(p->PickReclaimVictim(beneficiary, borrowers) == RequestId(12));
    CHECK_FALSE(p->PickReclaimVictim(beneficiary, {}).valid());
    // Within a hard class budget the beneficiary yields itself.
    CHECK(p->PickClassLimitVictim(beneficiary) == beneficiary.id);
  }
}

TEST_CASE("policy contract: unknown ids and out-of-order events are ignored",
          "[policy][contract]") {
  for (const auto& [name, factory] : AllPolicies()) {
    INFO("policy " << name);
    std::unique_ptr<Policy> p = factory(SchedulerOptions{});
    RequestView v;
    v.id = RequestId(5);
    v.prompt_tokens = 10;
    v.max_new_tokens = 4;
    absl::Time t = absl::UnixEpoch();
    // Events about a request never seen.
    p->OnAdmitted(v, t);
    p->OnPreempted(v, t);
    p->OnRemoved(v, t);
    ServedTokens s;
    s.id = v.id;
    s.decode_tokens = 1;
    p->OnServed({&s, 1}, t);
    p->BeginAdmission(t);
    CHECK_FALSE(p->NextAdmission().valid());
    CHECK_FALSE(p->PickVictim(v.id, true).valid());
    p->Decline(v.id);
    p->EndAdmission();
    // Then the normal life of that request still works.
    p->OnArrival(v, t);
    p->BeginAdmission(t);
    CHECK(p->NextAdmission() == v.id);
    p->EndAdmission();
    // Removed while waiting and announced again before any OnServed (the
    // core does this when a request's model is unloaded and reloaded): it
    // is a waiting request again.
    p->OnRemoved(v, t);
    p->BeginAdmission(t);
    CHECK_FALSE(p->NextAdmission().valid());
    p->EndAdmission();
    p->OnArrival(v, t);
    p->BeginAdmission(t);
    CHECK(p->NextAdmission() == v.id);
    p->EndAdmission();
    p->OnAdmitted(v, t);
    p->OnServed({&s, 1}, t);
    p->OnRemoved(v, t);
    p->OnServed({}, t);
    p->BeginAdmission(t);
    CHECK_FALSE(p->NextAdmission().valid());
    p->EndAdmission();
  }
}

}  // namespace
}  // namespace hearth

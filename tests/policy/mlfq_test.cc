// Properties of the skip-join MLFQ, through the Policy interface.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/mlfq.h"
#include "hearth/policy/policy_tree.h"
#include "policy_driver.h"

namespace hearth {
namespace {

using testing_policy::DriverOptions;
using testing_policy::MakeArrivalOrder;
using testing_policy::PolicyDriver;

std::unique_ptr<Policy> MakeMlfq(const MlfqOptions& options) {
  absl::StatusOr<PolicyFactory> factory = MlfqPolicyFactory(options);
  REQUIRE(factory.ok());
  return (*factory)(SchedulerOptions{});
}

TEST_CASE("mlfq: short jobs arriving after a long one finish first",
          "[policy][mlfq]") {
  bool recompute = GENERATE(false, true);
  DriverOptions machine;
  machine.max_running = 1;
  machine.token_budget = 256;
  machine.max_chunk = 256;
  machine.recompute = recompute;
  auto run = [&](std::unique_ptr<Policy> policy, RequestId* long_job,
                 std::vector<RequestId>* shorts) {
    auto d = std::make_unique<PolicyDriver>(std::move(policy), machine);
    *long_job = d->Add(0, 64, 2000, 0);
    for (int i = 0; i < 5; ++i) shorts->push_back(d->Add(1, 16, 8, 100 + i));
    d->Run(3000);
    return d;
  };
  RequestId long_job;
  std::vector<RequestId> shorts;
  auto d = run(MakeMlfq(MlfqOptions{}), &long_job, &shorts);
  REQUIRE(d->request(long_job).finish_step >= 0);
  for (RequestId s : shorts) {
    REQUIRE(d->request(s).finish_step >= 0);
    CHECK(d->request(s).finish_step < d->request(long_job).finish_step);
    // Each short job ran as soon as it arrived, preempting the long one.
    CHECK(d->request(s).finish_step - d->request(s).arrival_step <= 5 * 9);
  }
  CHECK(d->preemptions() >= 1);
  CHECK(d->errors().empty());

  // Control: arrival order makes the short jobs wait for the long one.
  std::vector<RequestId> shorts_fifo;
  auto control = run(MakeArrivalOrder(), &long_job, &shorts_fifo);
  for (RequestId s : shorts_fifo) {
    CHECK(control->request(s).finish_step >
          control->request(long_job).finish_step);
  }
}

TEST_CASE("mlfq: skip-join places a request by its prefill cost",
          "[policy][mlfq]") {
  // With one slot and no preemption pressure the order of admission shows
  // the levels: level 0 (prompt <= 32) before level 2 (prompt <= 128) before
  // level 4 (prompt <= 512), whatever the arrival order.
  DriverOptions machine;
  machine.max_running = 1;
  PolicyDriver d(MakeMlfq(MlfqOptions{}), machine);
  RequestId blocker = d.Add(0, 8, 20, 0);
  d.Run(1);
  RequestId big = d.Add(0, 500, 4, 1);
  RequestId mid = d.Add(0, 100, 4, 1);
  RequestId small = d.Add(0, 20, 4, 1);
  d.Run(200);
  REQUIRE(d.request(blocker).finish_step >= 0);
  CHECK(d.request(small).first_admit_step < d.request(mid).first_admit_step);
  CHECK(d.request(mid).first_admit_step < d.request(big).first_admit_step);
  CHECK(d.errors().empty());
}

TEST_CASE("mlfq: no request waits past the promotion bound",
          "[policy][mlfq]") {
  uint64_t seed = GENERATE(1, 2);
  MlfqOptions options;
  options.starvation_bound = absl::Milliseconds(500);  // 50 steps
  DriverOptions machine;
  machine.max_running = 2;
  machine.token_budget = 128;
  machine.max_chunk = 64;
  machine.seed = seed;
  auto flood = [&](PolicyDriver& d) {
    // Short jobs (4 steps each) keep level 0 busy at the machine's rate
    // (2 slots / 4 steps): level-0 work waits at every step.
    for (int i = 0; i < 6; ++i) d.Add(1, 8, 4, 0);
    for (int64_t s = 0; s < 3000; s += 2) d.Add(1, 8, 4, s);
    return d.Add(0, 600, 50, 5);  // joins level 5
  };
  PolicyDriver d(MakeMlfq(options), machine);
  RequestId long_job = flood(d);
  d.Run(3000);
  // Promotion after 50 steps puts a request at the head of level 0 (it keeps
  // its waiting time); it then waits for at most the few level-0 requests
  // queued before it and for a slot: 6 requests of 4 steps on 2 slots.
  const int64_t bound = 50 + 1 + 6 * 4 / 2 + 4;
  int64_t longest = 0;
  for (const auto& [id, r] : d.requests()) {
    longest = std::max(longest, r.longest_wait_steps);
  }
  INFO("longest single wait " << longest << " steps; bound " << bound);
  CHECK(longest <= bound);
  CHECK(d.request(long_job).finish_step >= 0);
  CHECK(d.errors().empty());

  // Control: without promotion the long job starves.
  options.starvation_bound = absl::InfiniteDuration();
  PolicyDriver control(MakeMlfq(options), machine);
  RequestId starved = flood(control);
  control.Run(3000);
  CHECK(control.request(starved).first_admit_step < 0);
}

TEST_CASE("mlfq: options are validated", "[policy][mlfq]") {
  MlfqOptions o;
  CHECK(ValidateMlfqOptions(o).ok());
  o.num_levels = 0;
  CHECK(ValidateMlfqOptions(o).code() == absl::StatusCode::kInvalidArgument);
  o.num_levels = 33;
  CHECK_FALSE(MlfqPolicyFactory(o).ok());
  o = MlfqOptions{};
  o.base_quantum = 0;
  CHECK_FALSE(ValidateMlfqOptions(o).ok());
  o = MlfqOptions{};
  o.starvation_bound = absl::ZeroDuration();
  CHECK_FALSE(ValidateMlfqOptions(o).ok());
}

}  // namespace
}  // namespace hearth

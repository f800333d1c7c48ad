// Properties of the skip-join MLFQ, through the Policy interface.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/mlfq.h"
#include "hearth/policy/policy_tree.h"
#include "tests/testing/policy_driver.h"

namespace hearth {
namespace {

using testing_policy::DriverOptions;
using testing_policy::MakeArrivalOrder;
using testing_policy::PolicyDriver;

// Time-slicing is asked for under recompute too (DriverOptions::recompute),
// so that the tests that run both modes test it in both.
PolicyFactory MakeMlfq(MlfqOptions options) {
  options.time_slice_with_recompute = true;
  absl::StatusOr<PolicyFactory> factory = MlfqPolicyFactory(options);
  REQUIRE(factory.ok());
  return *factory;
}

TEST_CASE("mlfq: short jobs arriving after a long one finish first",
          "[policy][mlfq]") {
  bool recompute = GENERATE(false, true);
  DriverOptions machine;
  machine.max_running = 1;
  machine.token_budget = 256;
  machine.max_chunk = 256;
  machine.recompute = recompute;
  auto run = [&](PolicyFactory policy, RequestId* long_job, std::vector<RequestId>* shorts) {
    auto d = std::make_unique<PolicyDriver>(std::move(policy), machine);
    *long_job = d->AddAt(0, {.user = 0, .prompt = 64, .max_new = 2000});
    for (int i = 0; i < 5; ++i) {
      shorts->push_back(d->AddAt(100 + i, {.user = 1, .prompt = 16, .max_new = 8}));
    }
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
  RequestId blocker = d.AddAt(0, {.user = 0, .prompt = 8, .max_new = 20});
  d.Run(1);
  RequestId big = d.AddAt(1, {.user = 0, .prompt = 500, .max_new = 4});
  RequestId mid = d.AddAt(1, {.user = 0, .prompt = 100, .max_new = 4});
  RequestId small = d.AddAt(1, {.user = 0, .prompt = 20, .max_new = 4});
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
    for (int i = 0; i < 6; ++i) d.AddAt(0, {.user = 1, .prompt = 8, .max_new = 4});
    for (int64_t s = 0; s < 3000; s += 2) d.AddAt(s, {.user = 1, .prompt = 8, .max_new = 4});
    return d.AddAt(5, {.user = 0, .prompt = 600, .max_new = 50});  // joins level 5
  };
  PolicyDriver d(MakeMlfq(options), machine);
  RequestId long_job = flood(d);
  d.Run(3000);
  // Starving after 50 steps, the long job is the earliest arrival waiting:
  // the starving lane admits it within 1 / starving_share admissions (one
  // per 2 steps on this machine) and the next slot that frees.
  const int64_t lane = static_cast<int64_t>(std::ceil(1 / options.starving_share));
  const int64_t bound = 50 + 1 + lane * 4 / 2 + 4;
  int64_t longest = 0;
  for (const auto& [id, r] : d.requests()) {
    longest = std::max(longest, r.longest_wait_steps);
  }
  INFO("longest single wait " << longest << " steps; bound " << bound);
  CHECK(longest <= bound);
  CHECK(d.request(long_job).finish_step >= 0);
  CHECK(d.errors().empty());

  // Control: without the starving lane the long job starves.
  options.starvation_bound = absl::InfiniteDuration();
  PolicyDriver control(MakeMlfq(options), machine);
  RequestId starved = flood(control);
  control.Run(3000);
  CHECK(control.request(starved).first_admit_step < 0);
}

TEST_CASE("mlfq: a request preempted for memory growth keeps the starving lane",
          "[policy][mlfq]") {
  // Three slots and room for 750 tokens of KV. A long-running job (100 +
  // 600 tokens) and a later one (300 + 200) outgrow the cache together, so
  // the first one's growth preempts the second, which waits at a demoted
  // level while short jobs (level 0) arrive faster than they are served
  // until step 3,000. Starving after 50 steps, the preempted job is the
  // earliest arrival waiting: the lane readmits it once memory frees for it
  // (the core admits only into free memory, and stops naming a request as a
  // victim after max_preemptions_per_request), so it finishes soon after
  // the first job frees its memory, not after the flood; without the lane
  // it does not finish at all.
  DriverOptions machine;
  machine.max_running = 3;
  machine.token_budget = 128;
  machine.max_chunk = 64;
  machine.kv_capacity_tokens = 750;
  MlfqOptions options;
  options.starvation_bound = absl::Milliseconds(500);  // 50 steps
  // No time-slicing (as on fastserve_azure_conv): only growth preempts.
  options.max_preemptions_per_step = 0;
  auto run = [&](const MlfqOptions& o, RequestId* first, RequestId* second) {
    auto d = std::make_unique<PolicyDriver>(MakeMlfq(o), machine);
    *first = d->AddAt(0, {.user = 0, .prompt = 100, .max_new = 600});
    *second = d->AddAt(1, {.user = 0, .prompt = 300, .max_new = 200});
    for (int64_t s = 5; s < 3000; ++s) d->AddAt(s, {.user = 1, .prompt = 8, .max_new = 4});
    d->Run(3200);
    return d;
  };
  RequestId first, second;
  auto d = run(options, &first, &second);
  const auto& a = d->request(first);
  const auto& b = d->request(second);
  INFO("first finished at step " << a.finish_step << ", second at " << b.finish_step
                                 << " after " << b.view.preemptions << " preemptions");
  REQUIRE(a.finish_step >= 0);
  REQUIRE(b.view.preemptions >= 1);
  REQUIRE(b.finish_step >= 0);
  CHECK(b.finish_step < a.finish_step + 400);
  CHECK(d->errors().empty());

  // Control: without the lane the preempted job waits out the flood.
  options.starvation_bound = absl::InfiniteDuration();
  auto control = run(options, &first, &second);
  CHECK(control->request(second).finish_step < 0);
}

TEST_CASE("mlfq: the last level yields after each base quantum since admission",
          "[policy][mlfq]") {
  // One slot. A 5,000-token prompt skip-joins the last level (its bound is
  // 32 * 2^6 = 2,048), so no demotion ever ends its quantum; a short job
  // arriving while it runs must still get the slot within a step or two,
  // not after the long job's 200 decodes. The core prices such an eviction
  // (max_admission_waste_per_block) and by default keeps a 5,000-token
  // context from being thrown away or moved for an 8-token job; that gate
  // is lifted here so that what is tested is the policy's own rule.
  DriverOptions machine;
  machine.max_running = 1;
  machine.token_budget = 256;
  machine.max_chunk = 256;
  machine.recompute = GENERATE(false, true);
  SchedulerOptions core;
  core.max_admission_waste_per_block = 1e9;
  PolicyDriver d(MakeMlfq(MlfqOptions{}), machine, core);
  const RequestId long_job = d.AddAt(0, {.user = 0, .prompt = 5000, .max_new = 200});
  const RequestId short_job = d.AddAt(30, {.user = 1, .prompt = 8, .max_new = 4});
  d.Run(1000);
  const auto& l = d.request(long_job);
  const auto& s = d.request(short_job);
  INFO("short admitted at step " << s.first_admit_step << ", long finished at " << l.finish_step);
  REQUIRE(s.first_admit_step >= 0);
  CHECK(s.first_admit_step - s.arrival_step <= 2);
  CHECK(l.finish_step >= 0);
  CHECK(d.preemptions() == 1);
  CHECK(d.errors().empty());
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
  for (double share : {0.0, -0.5, 1.5, std::nan("")}) {
    o = MlfqOptions{};
    o.starving_share = share;
    CHECK(ValidateMlfqOptions(o).code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("mlfq: under overload the starving lane keeps its share, the levels the rest",
          "[policy][mlfq]") {
  // More work than the machine serves: long jobs (level 5) and a stream of
  // short ones (level 0). Every long job that waits past the bound starves.
  // With a share below 1 (0.5) short jobs keep most admissions (their waits stay
  // below those with share 1, where starving work always goes first) while
  // long jobs still get admitted; with the lane off, long jobs starve.
  DriverOptions machine;
  machine.max_running = 2;
  machine.token_budget = 128;
  machine.max_chunk = 64;
  auto run = [&](absl::Duration bound, double share, double* short_wait, int* longs_admitted) {
    MlfqOptions options;
    options.starvation_bound = bound;
    options.starving_share = share;
    PolicyDriver d(MakeMlfq(options), machine);
    std::vector<RequestId> shorts, longs;
    for (int64_t s = 0; s < 2000; s += 2) {
      shorts.push_back(d.AddAt(s, {.user = 1, .prompt = 8, .max_new = 4}));
    }
    for (int64_t s = 0; s < 2000; s += 40) {
      longs.push_back(d.AddAt(s, {.user = 0, .prompt = 600, .max_new = 20}));
    }
    d.Run(2000);
    double waited = 0;
    for (RequestId id : shorts) {
      const auto& r = d.request(id);
      waited += (r.first_admit_step >= 0 ? r.first_admit_step : 2000) - r.arrival_step;
    }
    *short_wait = waited / shorts.size();
    *longs_admitted = 0;
    for (RequestId id : longs) *longs_admitted += d.request(id).first_admit_step >= 0;
    CHECK(d.errors().empty());
  };
  double lane_wait = 0, fifo_like_wait = 0, off_wait = 0;
  int lane_longs = 0, fifo_like_longs = 0, off_longs = 0;
  run(absl::Milliseconds(300), 0.5, &lane_wait, &lane_longs);
  run(absl::Milliseconds(300), 1.0, &fifo_like_wait, &fifo_like_longs);
  run(absl::InfiniteDuration(), 0.5, &off_wait, &off_longs);
  INFO("short mean wait: share 0.5 " << lane_wait << ", share 1 " << fifo_like_wait
                                      << ", off " << off_wait << "; long jobs admitted "
                                      << lane_longs << " / " << fifo_like_longs << " / "
                                      << off_longs);
  CHECK(lane_wait < fifo_like_wait);
  CHECK(lane_longs > off_longs);
  CHECK(lane_longs > 0);
}

TEST_CASE("mlfq: skip-join counts a predicted output, and only when allowed",
          "[policy][mlfq]") {
  // One slot, equal prompts: without predictions all join one level and are
  // admitted in arrival order; with them, predicted-short first. The core
  // takes a prediction only within max_new_tokens, so each request may run
  // to the longest prediction and the engine stops it (a stop token) after
  // 4 tokens, as the predictions' errors would have it.
  bool use = GENERATE(true, false);
  MlfqOptions options;
  options.use_predicted_output = use;
  DriverOptions machine;
  machine.max_running = 1;
  PolicyDriver d(MakeMlfq(options), machine);
  RequestId blocker = d.AddAt(0, {.user = 0, .prompt = 8, .max_new = 20});
  d.Run(1);
  std::vector<RequestId> ids;
  const int32_t predicted[] = {900, 300, 20};
  for (int32_t p : predicted) {
    ids.push_back(d.AddAt(1, {.user = 0, .prompt = 16, .max_new = 900}));
    d.PredictOutput(ids.back(), p);
    d.StopAfter(ids.back(), 4);
  }
  d.Run(200);
  REQUIRE(d.request(blocker).finish_step >= 0);
  for (RequestId id : ids) REQUIRE(d.request(id).first_admit_step >= 0);
  if (use) {
    CHECK(d.request(ids[2]).first_admit_step < d.request(ids[1]).first_admit_step);
    CHECK(d.request(ids[1]).first_admit_step < d.request(ids[0]).first_admit_step);
  } else {
    CHECK(d.request(ids[0]).first_admit_step < d.request(ids[1]).first_admit_step);
    CHECK(d.request(ids[1]).first_admit_step < d.request(ids[2]).first_admit_step);
  }
  CHECK(d.errors().empty());
}


// A live priority change (Scheduler::SetPriority) re-ranks a request in the
// tree; under MLFQ, which ranks by attained service, it must not hand a
// demoted request a fresh top level.
TEST_CASE("mlfq: a live change keeps the level a request has earned", "[policy][mlfq]") {
  MlfqOptions options;
  options.base_quantum = 4;
  std::unique_ptr<Policy> policy = MakeMlfq(options)(SchedulerOptions{});
  const absl::Time t0 = absl::UnixEpoch();
  RequestView a;
  a.id = RequestId(1);
  a.user = UserId(0);
  a.work_class = WorkClassId(0);
  a.prompt_tokens = 8;
  a.max_new_tokens = 500;
  a.arrival_seq = 1;
  a.arrival_time = t0;
  policy->OnArrival(a, t0);
  policy->BeginAdmission(t0);
  REQUIRE(policy->NextAdmission() == a.id);
  policy->EndAdmission();
  policy->OnAdmitted(a, t0);
  // Served well past several quanta: demoted.
  for (int step = 0; step < 200; ++step) {
    const ServedTokens served{a.id, a.user, a.work_class, step == 0 ? 8 : 0, step == 0 ? 0 : 1};
    policy->OnServed(absl::MakeConstSpan(&served, 1), t0 + absl::Milliseconds(step));
  }
  a.computed_tokens = 8 + 199;
  policy->OnPreempted(a, t0 + absl::Seconds(1));
  RequestView b = a;
  b.id = RequestId(2);
  b.arrival_seq = 2;
  b.arrival_time = t0 + absl::Seconds(1);
  b.computed_tokens = 0;
  policy->OnArrival(b, b.arrival_time);
  const absl::Time now = t0 + absl::Seconds(2);
  policy->BeginAdmission(now);
  CHECK(policy->NextAdmission() == b.id);
  policy->EndAdmission();
  // MLFQ ignores priority; the change must not move the demoted request up.
  a.priority = 7;
  policy->OnChanged(a, now);
  policy->BeginAdmission(now);
  CHECK(policy->NextAdmission() == b.id);
  policy->EndAdmission();
}

}  // namespace
}  // namespace hearth

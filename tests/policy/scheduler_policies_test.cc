// Every policy inside the real hearth::Scheduler: the core's randomized
// invariant driver under each policy and tree shape (SchedulerHarness checks
// CheckInvariants and the plan after every call), and the headline property
// of each policy end to end.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/container/flat_hash_map.h"
#include "hearth/policy/fifo.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/policy/policy_tree.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/random_workload.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

std::vector<std::pair<std::string, PolicyFactory>> Policies() {
  std::vector<std::pair<std::string, PolicyFactory>> all;
  PolicyConfig config;
  config.vtc.user_weights = {1, 2, 1};
  config.vtc.preempt_for_admission = true;
  config.vtc.admission_preemption_gap = 450;  // > the random contexts (<= 400)
  config.priority.aging_interval = absl::Milliseconds(50);
  config.priority.quota_window = absl::Milliseconds(100);
  config.priority.quotas = {{3, 200}};
  config.mlfq.base_quantum = 8;
  config.mlfq.starvation_bound = absl::Milliseconds(100);
  for (std::string_view name : KnownPolicyNames()) {
    all.emplace_back(std::string(name), *MakePolicyFactory(name, config));
  }
  config.household_request_level = RequestLevel::kMlfq;
  all.emplace_back("household+mlfq", *MakePolicyFactory("household", config));
  PolicyTreeConfig shares;
  shares.name = "shares";
  shares.class_level = ClassLevel::kWeightedShares;
  shares.class_weights = {4, 2, 1};
  all.emplace_back("shares", *PolicyTreeFactory(shares));
  return all;
}

TEST_CASE("scheduler+policy: the randomized invariant driver passes under "
          "every policy",
          "[policy][scheduler][property]") {
  for (const auto& [name, factory] : Policies()) {
    testing::RandomWorkloadStats total;
    for (uint64_t seed = 1; seed <= 700; ++seed) {
      INFO("policy " << name << " seed " << seed);
      testing::RandomWorkloadStats stats;
      absl::Status s = testing::RunRandomWorkload(seed, &factory, &stats);
      if (!s.ok()) FAIL(s.ToString());
      total.Add(stats);
    }
    INFO("policy " << name);
    CHECK(total.finished > 500);
    CHECK(total.preemptions_recompute + total.preemptions_swap > 20);
    // The rank rule (rank_checking_policy.h) was judged, not skipped.
    CHECK(total.victims_checked > 20);
  }
}

SchedulerOptions Machine(PolicyFactory factory) {
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 64;  // 1,024 tokens of KV
  o.kv.enable_prefix_caching = false;
  o.max_batched_tokens = 256;
  o.max_running = 8;
  o.max_prefill_chunk_tokens = 128;
  o.users = {{"a", 1.0}, {"b", 1.0}};
  o.policy_factory = std::move(factory);
  return o;
}

// Runs two backlogged users (small vs large requests) and returns the
// largest difference of tokens served while both had waiting requests.
int64_t TwoUserGap(PolicyFactory factory) {
  auto h = SchedulerHarness::Create(Machine(std::move(factory)));
  REQUIRE(h.ok());
  absl::flat_hash_map<RequestId, uint32_t> owner;
  std::vector<RequestId> mine[2];
  for (int i = 0; i < 120; ++i) {
    for (uint32_t u = 0; u < 2; ++u) {
      auto id = (*h)->Submit(u == 0 ? Spec({.user = 0, .prompt = 32, .max_new = 16})
                                    : Spec({.user = 1, .prompt = 200, .max_new = 100}));
      REQUIRE(id.ok());
      owner[*id] = u;
      mine[u].push_back(*id);
    }
  }
  int64_t served[2] = {0, 0};
  // Service is each request's positions computed for the first time:
  // recomputing after a preemption serves nobody again.
  absl::flat_hash_map<RequestId, int32_t> reached;
  int64_t worst = 0;
  for (int step = 0; step < 20000; ++step) {
    REQUIRE((*h)->Step().ok());
    for (const auto& s : (*h)->last_plan().sequences) {
      int32_t& most = reached[s.id];
      const int32_t end = s.start_position + s.num_tokens;
      served[owner.at(s.id)] += std::max(0, end - std::max(most, s.start_position));
      most = std::max(most, end);
    }
    bool both = true;
    for (uint32_t u = 0; u < 2; ++u) {
      bool waiting = false;
      for (RequestId id : mine[u]) {
        auto v = (*h)->scheduler().GetRequest(id);
        waiting = waiting || (v.ok() && v->phase == RequestPhase::kWaiting);
        if (waiting) break;
      }
      both = both && waiting;
    }
    if (!both) break;
    worst = std::max(worst, std::abs(served[0] - served[1]));
  }
  return worst;
}

TEST_CASE("scheduler+vtc: two backlogged users stay within the bound",
          "[policy][scheduler][vtc]") {
  VtcOptions vtc;
  vtc.decode_token_weight = 1;  // service = tokens, as counted from plans
  // 2 * max(w_p * L_input, w_q * M), M = 1,024 tokens of KV.
  const int64_t bound = 2 * std::max<int64_t>(200, 1024);
  int64_t gap = TwoUserGap(*VtcPolicyFactory(vtc));
  INFO("vtc gap " << gap << " bound " << bound);
  CHECK(gap <= bound);
  int64_t fifo_gap = TwoUserGap([](const SchedulerOptions&) { return NewFifoPolicy(); });
  INFO("fifo gap " << fifo_gap);
  CHECK(fifo_gap > bound);
}

TEST_CASE("scheduler+mlfq: short jobs submitted after a long one finish first",
          "[policy][scheduler][mlfq]") {
  auto run = [](PolicyFactory factory, bool* shorts_first) {
    SchedulerOptions o = Machine(std::move(factory));
    o.max_running = 1;
    auto h = SchedulerHarness::Create(o);
    REQUIRE(h.ok());
    RequestId long_job = *(*h)->Submit(Spec({.user = 0, .prompt = 64, .max_new = 400}));
    for (int i = 0; i < 50; ++i) REQUIRE((*h)->Step().ok());
    std::vector<RequestId> shorts;
    for (int i = 0; i < 4; ++i) {
      shorts.push_back(*(*h)->Submit(Spec({.user = 1, .prompt = 16, .max_new = 8})));
    }
    REQUIRE((*h)->RunUntilIdle().ok());
    const auto& results = (*h)->results();
    *shorts_first = true;
    for (RequestId s : shorts) {
      REQUIRE(results.at(s).phase == RequestPhase::kFinished);
      *shorts_first = *shorts_first &&
                      results.at(s).end_time < results.at(long_job).end_time;
    }
    CHECK(results.at(long_job).phase == RequestPhase::kFinished);
  };
  bool mlfq_first = false, fifo_first = true;
  MlfqOptions time_slicing;
  time_slicing.time_slice_with_recompute = true;
  run(*MlfqPolicyFactory(time_slicing), &mlfq_first);
  run([](const SchedulerOptions&) { return NewFifoPolicy(); }, &fifo_first);
  CHECK(mlfq_first);
  CHECK_FALSE(fifo_first);
}

// Eight long jobs fill the slots and get demoted; then eight short level-0
// jobs want their slots at once. Returns the most preemptions in one step
// and (in *total) all of them.
int MostTimeSlicesPerStep(int32_t cap, bool slice_with_recompute, bool swap, int64_t* total) {
  MlfqOptions m;
  m.base_quantum = 4;  // quanta run out within a few steps
  m.max_preemptions_per_step = cap;
  m.time_slice_with_recompute = slice_with_recompute;
  SchedulerOptions o = Machine(*MlfqPolicyFactory(m));
  // Room for everyone: every preemption here is time-slicing, none is
  // for memory (which the cap does not limit).
  o.kv.num_device_blocks = 256;
  if (swap) {
    o.preemption_mode = PreemptionMode::kSwap;
    o.kv.num_host_blocks = 256;
  }
  // Time-slicing is repeated preemption by design; the per-request bound
  // is not what this measures.
  o.max_preemptions_per_request = 1000;
  auto h = SchedulerHarness::Create(o);
  REQUIRE(h.ok());
  for (int i = 0; i < 8; ++i) {
    REQUIRE((*h)->Submit(Spec({.user = 0, .prompt = 16, .max_new = 200})).ok());
  }
  for (int step = 0; step < 20; ++step) REQUIRE((*h)->Step().ok());
  int most = 0;
  *total = 0;
  // Every long job's quantum has run out, so only the cap keeps them from
  // all preempting in one step.
  for (int i = 0; i < 8; ++i) {
    REQUIRE((*h)->Submit(Spec({.user = 1, .prompt = 8, .max_new = 4})).ok());
  }
  for (int step = 0; step < 200; ++step) {
    REQUIRE((*h)->Step().ok());
    const int n = static_cast<int>((*h)->last_plan().preempted.size());
    most = std::max(most, n);
    *total += n;
  }
  REQUIRE((*h)->RunUntilIdle().ok());
  return most;
}

TEST_CASE("scheduler+mlfq: time-slicing preemptions per step stay within "
          "max_preemptions_per_step",
          "[policy][scheduler][mlfq]") {
  for (int32_t cap : {0, 1, 3}) {
    INFO("max_preemptions_per_step " << cap);
    int64_t total = 0;
    CHECK(MostTimeSlicesPerStep(cap, /*slice_with_recompute=*/true, /*swap=*/false, &total) ==
          std::min(cap, 8));
    CHECK(total >= std::min(cap, 1) * 8);
  }
  MlfqOptions bad;
  bad.max_preemptions_per_step = -1;
  CHECK(MlfqPolicyFactory(bad).status().code() == absl::StatusCode::kInvalidArgument);
}

// A time slice under recompute throws the victim's context away; by default
// MLFQ slices only when the scheduler swaps.
TEST_CASE("scheduler+mlfq: no time-slicing by recompute unless asked for",
          "[policy][scheduler][mlfq]") {
  int64_t total = 0;
  CHECK(MostTimeSlicesPerStep(3, /*slice_with_recompute=*/false, /*swap=*/false, &total) == 0);
  CHECK(total == 0);
  CHECK(MostTimeSlicesPerStep(3, /*slice_with_recompute=*/false, /*swap=*/true, &total) == 3);
  CHECK(total >= 8);
}

TEST_CASE("scheduler+priority: aging admits a maintenance request under a "
          "voice flood",
          "[policy][scheduler][priority]") {
  auto run = [](absl::Duration aging, absl::Duration* waited) {
    PriorityQuotaOptions p;
    p.aging_interval = aging;
    auto h = SchedulerHarness::Create(Machine(*PriorityQuotaPolicyFactory(p)));
    REQUIRE(h.ok());
    // Voice: 8-step requests on 8 slots, one per step plus a backlog of 20,
    // so voice work waits at every step.
    for (int i = 0; i < 20; ++i) {
      REQUIRE((*h)->Submit(Spec({.user = 0, .prompt = 16, .max_new = 8, .priority = 4})).ok());
    }
    RequestId maintenance;
    absl::Duration longest_voice = absl::ZeroDuration();
    for (int step = 0; step < 600; ++step) {
      REQUIRE((*h)->Submit(Spec({.user = 0, .prompt = 16, .max_new = 8, .priority = 4})).ok());
      if (step == 100) {
        maintenance = *(*h)->Submit(Spec({.user = 1, .prompt = 64, .max_new = 16, .priority = 0}));
      }
      REQUIRE((*h)->Step().ok());
    }
    for (const auto& [id, r] : (*h)->results()) {
      if (id != maintenance) {
        longest_voice = std::max(longest_voice, r.first_admit_time - r.arrival_time);
      }
    }
    auto it = (*h)->results().find(maintenance);
    *waited = it == (*h)->results().end()
                  ? absl::InfiniteDuration()
                  : it->second.first_admit_time - it->second.arrival_time;
    return longest_voice;
  };
  absl::Duration waited;
  absl::Duration interval = absl::Milliseconds(100);
  absl::Duration longest_voice = run(interval, &waited);
  // (P - p + 1) intervals, then only older voice requests go first.
  absl::Duration bound = 5 * interval + longest_voice + absl::Milliseconds(10);
  INFO("maintenance waited " << absl::FormatDuration(waited) << ", bound "
                             << absl::FormatDuration(bound));
  CHECK(waited <= bound);
  absl::Duration starved;
  run(absl::InfiniteDuration(), &starved);
  CHECK(starved == absl::InfiniteDuration());
}

}  // namespace
}  // namespace hearth

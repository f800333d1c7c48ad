// Agent workflows under each policy, end to end in the real scheduler: the
// next call of a running workflow is not queued behind unrelated work that
// arrived while its parent ran (arrival-ordered leaves give it a bounded head
// start; MLFQ ranks a short next call above demoted long work), and
// a workflow's calls share their user's fairness account rather than adding
// a share of their own.

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
#include "hearth/policy/vtc.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

SchedulerOptions Machine(PolicyFactory factory, int32_t max_running) {
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 64;  // 1,024 tokens of KV
  o.kv.enable_prefix_caching = false;
  o.max_batched_tokens = 256;
  o.max_running = max_running;
  o.users = {{"a", 1.0}, {"b", 1.0}};
  o.policy_factory = std::move(factory);
  return o;
}

struct NextCall {
  // Background requests waiting when the next call arrived that were
  // admitted before it.
  int overtaken = 0;
  // Steps from the next call's arrival to its admission.
  int waited_steps = 0;
};

// A workflow's first call runs; then `background` requests of the same user
// and class arrive (unrelated work, e.g. a batch an agent fired off); when
// the first call ends its workflow's next call arrives. Reports how the
// next call fared against the background still waiting.
NextCall RunWorkflowUnderFlood(PolicyFactory factory, int32_t background_prompt,
                               int32_t background_output) {
  auto made = SchedulerHarness::Create(Machine(std::move(factory), 2));
  REQUIRE(made.ok());
  SchedulerHarness& h = **made;
  RequestId first = *h.Submit(Spec({.user = 0, .prompt = 16, .max_new = 6}));
  REQUIRE(h.Step().ok());
  std::vector<RequestId> background;
  for (int i = 0; i < 24; ++i) {
    background.push_back(
        *h.Submit(Spec({.user = 0, .prompt = background_prompt, .max_new = background_output})));
  }
  while (!h.results().contains(first)) REQUIRE(h.Step().ok());
  REQUIRE(h.results().at(first).phase == RequestPhase::kFinished);

  std::vector<RequestId> waiting_then;
  for (RequestId id : background) {
    auto v = h.scheduler().GetRequest(id);
    // Waiting and never preempted: not admitted yet.
    if (v.ok() && v->phase == RequestPhase::kWaiting && v->preemptions == 0) {
      waiting_then.push_back(id);
    }
  }
  REQUIRE(waiting_then.size() >= 10);
  RequestId next = *h.Submit(Spec({.user = 0, .prompt = 16, .max_new = 6, .parent = first}));
  NextCall out;
  for (;;) {
    REQUIRE(h.Step().ok());
    auto v = h.scheduler().GetRequest(next);
    if (!v.ok() || v->phase != RequestPhase::kWaiting) break;
    ++out.waited_steps;
    REQUIRE(out.waited_steps < 5000);
  }
  REQUIRE(h.RunUntilIdle().ok());
  const absl::Time admitted = h.results().at(next).first_admit_time;
  for (RequestId id : waiting_then) {
    if (h.results().at(id).first_admit_time < admitted) ++out.overtaken;
  }
  return out;
}

TEST_CASE("workflow: the next call of a running workflow goes ahead of work "
          "that arrived while its parent ran, under arrival-ordered leaves",
          "[policy][scheduler][workflow]") {
  PolicyConfig config;
  for (std::string name : {"vtc", "priority", "household"}) {
    INFO("policy " << name);
    NextCall call = RunWorkflowUnderFlood(*MakePolicyFactory(name, config), 16, 12);
    CHECK(call.overtaken == 0);
  }
  PolicyTreeConfig shares;
  shares.name = "shares";
  shares.class_level = ClassLevel::kWeightedShares;
  NextCall call = RunWorkflowUnderFlood(*PolicyTreeFactory(shares), 16, 12);
  CHECK(call.overtaken == 0);
  // Plain FIFO ranks calls, not workflows: the next call queues behind
  // everything that arrived while its parent ran.
  NextCall fifo = RunWorkflowUnderFlood([](const SchedulerOptions&) { return NewFifoPolicy(); }, 16, 12);
  INFO("fifo overtaken " << fifo.overtaken);
  CHECK(fifo.overtaken >= 10);
}

TEST_CASE("workflow: the head start bounds how far ahead a next call ranks",
          "[policy][scheduler][workflow]") {
  // The workflow's first call at 0 s; batch A of the same user and class at
  // 60 s, batch B at 120 s, then the workflow's next call, with two slots.
  // The call ranks at max(workflow start, its arrival - head start).
  auto run = [](absl::Duration head_start, int* overtaken_a, int* overtaken_b) {
    PolicyTreeConfig tree = HouseholdTreeConfig();
    tree.workflow_head_start = head_start;
    auto made = SchedulerHarness::Create(Machine(*PolicyTreeFactory(tree), 2));
    REQUIRE(made.ok());
    SchedulerHarness& h = **made;
    RequestId first = *h.Submit(Spec({.user = 0, .prompt = 16, .max_new = 6}));
    REQUIRE(h.RunUntilIdle().ok());
    std::vector<RequestId> batch[2];
    for (int b = 0; b < 2; ++b) {
      h.Advance(absl::Seconds(60));
      for (int i = 0; i < 8; ++i) {
        batch[b].push_back(*h.Submit(Spec({.user = 0, .prompt = 16, .max_new = 12})));
      }
      REQUIRE(h.Step().ok());
    }
    RequestId next = *h.Submit(Spec({.user = 0, .prompt = 16, .max_new = 6, .parent = first}));
    REQUIRE(h.RunUntilIdle().ok());
    const absl::Time admitted = h.results().at(next).first_admit_time;
    int* counts[2] = {overtaken_a, overtaken_b};
    for (int b = 0; b < 2; ++b) {
      *counts[b] = 0;
      for (RequestId id : batch[b]) {
        if (h.results().at(id).first_admit_time > h.results().at(next).arrival_time &&
            h.results().at(id).first_admit_time < admitted) {
          ++*counts[b];
        }
      }
    }
  };
  int a = 0, b = 0;
  run(absl::Seconds(30), &a, &b);  // ranks at ~90 s: after A, before B
  CHECK(a > 0);
  CHECK(b == 0);
  run(absl::InfiniteDuration(), &a, &b);  // at the workflow's start: first
  CHECK(a == 0);
  CHECK(b == 0);
  run(absl::ZeroDuration(), &a, &b);  // alone: after both batches
  CHECK(a > 0);
  CHECK(b > 0);

  PolicyTreeConfig bad = HouseholdTreeConfig();
  bad.workflow_head_start = absl::Seconds(-1);
  absl::StatusOr<PolicyFactory> refused = PolicyTreeFactory(bad);
  REQUIRE(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(refused.status().message()).find("workflow_head_start") !=
        std::string::npos);
}

TEST_CASE("workflow: under MLFQ a short next call outranks long background "
          "work",
          "[policy][scheduler][workflow][mlfq]") {
  PolicyConfig config;
  config.household_request_level = RequestLevel::kMlfq;
  for (std::string name : {"mlfq", "household"}) {
    INFO("policy " << name << "+mlfq");
    // Long prompts skip-join low levels; the next call joins the top.
    // (300 + 40 tokens each: two fit the 1,024-token cache.)
    NextCall call = RunWorkflowUnderFlood(*MakePolicyFactory(name, config), 300, 40);
    CHECK(call.overtaken == 0);
    // At most until one running background job ends.
    CHECK(call.waited_steps <= 45);
  }
  NextCall fifo = RunWorkflowUnderFlood([](const SchedulerOptions&) { return NewFifoPolicy(); }, 300, 40);
  CHECK(fifo.overtaken >= 10);
}

TEST_CASE("workflow: a fanned-out workflow shares its user's VTC account",
          "[policy][scheduler][workflow][vtc]") {
  VtcOptions vtc;
  vtc.decode_token_weight = 1;  // service = tokens, as counted from plans
  auto made = SchedulerHarness::Create(Machine(*VtcPolicyFactory(vtc), 8));
  REQUIRE(made.ok());
  SchedulerHarness& h = **made;
  // User a: one workflow fanning out into 60 calls (all children of one
  // root). User b: 60 independent requests of the same size.
  absl::flat_hash_map<RequestId, uint32_t> owner;
  RequestId root = *h.Submit(Spec({.user = 0, .prompt = 32, .max_new = 16}));
  owner[root] = 0;
  std::vector<RequestId> mine[2];
  for (int i = 0; i < 60; ++i) {
    RequestId a = *h.Submit(Spec({.user = 0, .prompt = 32, .max_new = 16, .parent = root}));
    RequestId b = *h.Submit(Spec({.user = 1, .prompt = 32, .max_new = 16}));
    owner[a] = 0;
    owner[b] = 1;
    mine[0].push_back(a);
    mine[1].push_back(b);
  }
  int64_t served[2] = {0, 0};
  int64_t worst = 0;
  for (int step = 0; step < 20000; ++step) {
    REQUIRE(h.Step().ok());
    for (const auto& s : h.last_plan().sequences) served[owner.at(s.id)] += s.num_tokens;
    bool both = true;
    for (uint32_t u = 0; u < 2 && both; ++u) {
      both = std::any_of(mine[u].begin(), mine[u].end(), [&](RequestId id) {
        auto v = h.scheduler().GetRequest(id);
        return v.ok() && v->phase == RequestPhase::kWaiting;
      });
    }
    if (!both) break;
    worst = std::max(worst, std::abs(served[0] - served[1]));
  }
  // 2 * max(w_p * L_input, w_q * M) with M = 1,024 tokens of KV.
  const int64_t bound = 2 * std::max<int64_t>(32, 1024);
  INFO("largest service gap " << worst << " bound " << bound);
  CHECK(worst <= bound);
  CHECK(served[0] > 0);
  CHECK(served[1] > 0);
  REQUIRE(h.RunUntilIdle().ok());
}

}  // namespace
}  // namespace hearth

// The oracle baselines: shortest true remaining output first, fed by the
// simulator, never worse than FIFO on mean JCT where order is all that
// differs, and preempting only in their preemptive variant.

#include <catch2/catch.hpp>

#include <vector>

#include "hearth/policy/fifo.h"
#include "hearth/sim/oracle_policy.h"
#include "hearth/sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace hearth {
namespace {

using testing_sim::FlatCost;
using testing_sim::SmallScheduler;

// One sequence at a time, so the order of service is the whole difference
// between policies.
SimulationOptions OneAtATime(const StepCostModel* cost) {
  SimulationOptions o;
  o.scheduler = SmallScheduler({"a"}, {"chat"});
  o.scheduler.max_running = 1;
  o.cost_model = cost;
  return o;
}

// Requests arriving 1 ms apart, longest output first: FIFO's worst order.
Workload LongestFirst(const std::vector<int32_t>& outputs) {
  Workload w;
  for (size_t i = 0; i < outputs.size(); ++i) {
    SimRequest r;
    r.arrival = absl::Milliseconds(static_cast<int64_t>(i));
    r.prompt_tokens = 32;
    r.output_tokens = outputs[i];
    r.max_new_tokens = 512;
    w.requests.push_back(r);
  }
  return w;
}

double MeanJct(const Workload& w, SimulationOptions o) {
  absl::StatusOr<SimulationResult> r = RunSimulation(w, o);
  REQUIRE(r.ok());
  REQUIRE(r->report.total.finished == w.requests.size());
  return r->report.total.e2e.mean;
}

TEST_CASE("oracle policies finish a tiny workload with mean JCT at most FIFO's", "[sim]") {
  auto cost = FlatCost(10);
  const Workload w = LongestFirst({300, 200, 40, 8, 120, 2});
  SimulationOptions fifo = OneAtATime(cost.get());
  fifo.scheduler.policy_factory = [](const SchedulerOptions&) { return NewFifoPolicy(); };
  const double fifo_jct = MeanJct(w, fifo);
  for (const char* name : {"oracle_srpt", "oracle_srpt_preemptive"}) {
    INFO(name);
    SimulationOptions oracle = OneAtATime(cost.get());
    oracle.oracle_policy = *MakeOraclePolicyFactory(name);
    const double oracle_jct = MeanJct(w, oracle);
    CHECK(oracle_jct <= fifo_jct);
    // Serving 2 before 300 here saves whole seconds, far beyond step noise.
    CHECK(oracle_jct < 0.8 * fifo_jct);
  }
}

TEST_CASE("only the preemptive oracle evicts a longer job for a shorter arrival", "[sim]") {
  auto cost = FlatCost(10);
  Workload w = LongestFirst({400, 4});
  w.requests[1].arrival = absl::Seconds(1);  // Arrives while the long one decodes.
  SimulationOptions plain = OneAtATime(cost.get());
  plain.oracle_policy = *MakeOraclePolicyFactory("oracle_srpt");
  SimulationOptions preemptive = OneAtATime(cost.get());
  preemptive.oracle_policy = *MakeOraclePolicyFactory("oracle_srpt_preemptive");
  absl::StatusOr<SimulationResult> a = RunSimulation(w, plain);
  absl::StatusOr<SimulationResult> b = RunSimulation(w, preemptive);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->report.total.preemptions == 0);
  CHECK(b->report.total.preemptions >= 1);
  CHECK(b->report.total.e2e.mean < a->report.total.e2e.mean);
  CHECK(a->policy_name == "oracle_srpt");
  CHECK(b->policy_name == "oracle_srpt_preemptive");
}

RequestView Waiting(uint64_t id, int32_t generated) {
  RequestView v;
  v.id = RequestId(id);
  v.arrival_seq = id;
  v.prompt_tokens = 16;
  v.max_new_tokens = 100;
  v.output_tokens = generated;
  return v;
}

TEST_CASE("the oracle ranks by true output left and skips declined requests", "[sim]") {
  TrueOutputLengths lengths;
  lengths.Set(RequestId(1), 50);
  lengths.Set(RequestId(2), 10);
  // Request 3 has no recorded length: its max_new_tokens (100) stands in.
  std::unique_ptr<Policy> p = NewOracleSrptPolicy(lengths, /*preemptive=*/false);
  const absl::Time t = absl::UnixEpoch();
  for (uint64_t id : {1, 2, 3}) p->OnArrival(Waiting(id, 0), t);
  p->BeginAdmission(t);
  CHECK(p->NextAdmission() == RequestId(2));
  p->Decline(RequestId(2));
  CHECK(p->NextAdmission() == RequestId(1));
  p->EndAdmission();
  p->OnAdmitted(Waiting(1, 0), t);
  // Non-preemptive: a waiting request takes no victim.
  CHECK_FALSE(p->PickVictim(RequestId(2), /*beneficiary_running=*/false).valid());

  // 45 of request 1's 50 tokens done: 5 left, fewer than request 2's 10.
  std::unique_ptr<Policy> q = NewOracleSrptPolicy(lengths, /*preemptive=*/true);
  q->OnArrival(Waiting(1, 45), t);
  q->OnArrival(Waiting(2, 0), t);
  q->OnArrival(Waiting(3, 0), t);
  q->BeginAdmission(t);
  CHECK(q->NextAdmission() == RequestId(1));
  q->EndAdmission();
  q->OnAdmitted(Waiting(3, 0), t);
  q->OnAdmitted(Waiting(1, 45), t);
  // Request 3 (100 left) yields to request 2 (10 left); request 1 (5 left)
  // ranks before request 2 and is never its victim.
  CHECK(q->PickVictim(RequestId(2), false) == RequestId(3));
  q->OnServed(std::vector<ServedTokens>{{.id = RequestId(3), .decode_tokens = 1}}, t);
  RequestId out[4];
  CHECK(q->VictimCandidates(RequestId(2), false, out) == 1);
  // Growth: request 3, with the most left, yields to request 1 and takes
  // no victim itself.
  CHECK(q->PickVictim(RequestId(1), true) == RequestId(3));
  CHECK_FALSE(q->PickVictim(RequestId(3), true).valid());
}

}  // namespace
}  // namespace hearth

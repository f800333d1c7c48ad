#include <catch2/catch.hpp>

#include "hearth/metrics/prometheus.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/sim/household_workload.h"
#include "hearth/sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace hearth {
namespace {

using testing_sim::FlatCost;
using testing_sim::SmallScheduler;

SimulationOptions HouseOptions(const StepCostModel* cost) {
  SimulationOptions o;
  o.scheduler = SmallScheduler({"a", "b", "c"},
                               {"voice", "chat", "documents", "agent", "nightly"});
  o.scheduler.models[0].context_length = 40000;
  o.scheduler.kv.num_device_blocks = 8192;
  o.cost_model = cost;
  o.record_timeline = true;
  return o;
}

Workload House(uint64_t seed) {
  HouseholdOptions h = DefaultHousehold(3, 0, 1, 2, 3, 4);
  h.duration = absl::Hours(2);
  h.start_time_of_day = absl::Hours(19);
  h.seed = seed;
  return *GenerateHousehold(h);
}

TEST_CASE("same seed gives byte-identical results, another seed differs",
          "[sim]") {
  auto cost = FlatCost(20);
  const SimulationOptions o = HouseOptions(cost.get());
  auto a = RunSimulation(House(1), o);
  auto b = RunSimulation(House(1), o);
  auto c = RunSimulation(House(2), o);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(c.ok());
  CHECK(a->report.total.finished > 20);
  CHECK(PrometheusText(a->report) == PrometheusText(b->report));
  CHECK(a->timeline_json == b->timeline_json);
  CHECK(a->steps == b->steps);
  CHECK(PrometheusText(a->report) != PrometheusText(c->report));
}

TEST_CASE("chained calls wait for their parent and reuse its prefix",
          "[sim]") {
  Workload w;
  SimRequest first;
  first.prompt_tokens = 160;
  first.output_tokens = 4;
  w.requests.push_back(first);
  SimRequest second;
  second.parent = 0;
  second.think_time = absl::Seconds(1);
  second.prompt_tokens = 260;
  second.output_tokens = 2;
  second.shared_prefix_tokens = 164;  // the first prompt and its answer
  w.requests.push_back(second);

  auto cost = FlatCost(10);
  SimulationOptions o;
  o.scheduler = SmallScheduler({"u"}, {"c"});
  o.cost_model = cost.get();
  auto r = RunSimulation(w, o);
  REQUIRE(r.ok());
  CHECK(r->report.total.finished == 2);
  // First: 4 steps of 10 ms (prefill + 3 decodes), ends at 0.04 s. Second
  // arrives at 1.04 s and runs 2 steps: the run ends at 1.06 s.
  CHECK(r->simulated_seconds == Approx(1.06));
  // Its first 160 prompt tokens (10 full blocks of 16) hit the cache.
  CHECK(r->prefix_hit_tokens >= 160);
  CHECK(r->report.total.prefill_tokens < 160 + 260);
  // One workflow of two calls, from 0 s to the second call's end.
  CHECK(r->workflows == 1);
  CHECK(r->workflows_incomplete == 0);
  REQUIRE(r->workflow_seconds.size() == 1);
  CHECK(r->workflow_seconds[0] == Approx(1.06));
}

TEST_CASE("a failed parent drops its dependents, bad options are refused",
          "[sim]") {
  Workload w;
  SimRequest big;
  big.prompt_tokens = 5000;  // beyond the 4096 context: Submit refuses it
  big.output_tokens = 1;
  w.requests.push_back(big);
  SimRequest child = big;
  child.prompt_tokens = 10;
  child.parent = 0;
  w.requests.push_back(child);
  auto cost = FlatCost(10);
  SimulationOptions o;
  o.scheduler = SmallScheduler({"u"}, {"c"});
  o.cost_model = cost.get();
  auto r = RunSimulation(w, o);
  REQUIRE(r.ok());
  CHECK(r->submit_rejected == 1);
  CHECK(r->dependents_dropped == 1);
  CHECK(r->workflows == 1);
  CHECK(r->workflows_incomplete == 1);
  CHECK(r->workflow_seconds.empty());

  o.cost_model = nullptr;
  CHECK(absl::IsInvalidArgument(RunSimulation(w, o).status()));
  o.cost_model = cost.get();
  w.requests[1].user = 7;
  CHECK(absl::IsInvalidArgument(RunSimulation(w, o).status()));
}

TEST_CASE("every registered policy runs the household to completion",
          "[sim]") {
  auto cost = FlatCost(20);
  SimulationOptions o = HouseOptions(cost.get());
  o.record_timeline = false;
  const Workload w = House(3);
  for (std::string_view name : KnownPolicyNames()) {
    PolicyConfig pc;
    auto f = MakePolicyFactory(name, pc);
    REQUIRE(f.ok());
    o.scheduler.policy_factory = *f;
    auto r = RunSimulation(w, o);
    INFO(name);
    REQUIRE(r.ok());
    CHECK(r->report.total.arrived + r->submit_rejected + r->dependents_dropped ==
          w.requests.size());
    CHECK(r->report.total.finished == r->report.total.arrived);
  }
}

TEST_CASE("the household's embedding job runs as embeddings beside the chat", "[sim][embed]") {
  auto cost = FlatCost(20);
  SimulationOptions o = HouseOptions(cost.get());
  o.record_timeline = false;
  o.scheduler.work_classes.push_back({.name = "index"});
  HouseholdOptions h = DefaultHousehold(3, 0, 1, kNoClass, kNoClass, kNoClass);
  h.classes.push_back(EmbeddingJob(5));
  h.duration = absl::Hours(1);
  h.start_time_of_day = absl::Hours(19);
  h.seed = 5;
  const Workload w = *GenerateHousehold(h);
  int64_t embeddings = 0;
  for (const SimRequest& r : w.requests) {
    if (r.kind != RequestKind::kEmbed) continue;
    ++embeddings;
    CHECK(r.work_class == 5);
    CHECK(r.user == 0);
    CHECK(r.pooling == Pooling::kMean);
    // A run is submitted at once: no chain.
    CHECK(r.parent == -1);
  }
  REQUIRE(embeddings > 20);
  auto r = RunSimulation(w, o);
  REQUIRE(r.ok());
  const GroupReport& index = r->report.classes[5];
  CHECK(index.finished == static_cast<uint64_t>(embeddings));
  CHECK(index.output_tokens == 0);
  CHECK(index.ttft.count == static_cast<uint64_t>(embeddings));
  CHECK(index.prefill_tokens > 0);
  CHECK(r->report.total.finished == r->report.total.arrived);
}

// Counts the encoder work the simulated engine is asked to price.
class EncoderCountingCost : public StepCostModel {
 public:
  absl::Duration StepTime(const StepWork& work) const override {
    encoded_ += work.encoder_tokens;
    // Empty steps cost nothing (the simulator then skips to the next event).
    return work.sequences.empty() ? absl::ZeroDuration() : absl::Milliseconds(20);
  }
  std::string Describe() const override { return "flat 20 ms a step, counting encoder work"; }
  int64_t encoded() const { return encoded_; }

 private:
  mutable int64_t encoded_ = 0;
};

TEST_CASE("photo questions carry their photo as an encoder span, priced where it is encoded",
          "[sim][multimodal]") {
  EncoderCountingCost cost;
  SimulationOptions o = HouseOptions(&cost);
  o.record_timeline = false;
  o.scheduler.work_classes.push_back({.name = "photo"});
  HouseholdOptions h = DefaultHousehold(3, 0, 1, kNoClass, kNoClass, kNoClass);
  h.classes.push_back(PhotoAnalysis(5));
  h.duration = absl::Hours(2);
  h.start_time_of_day = absl::Hours(19);
  h.seed = 7;
  const Workload w = *GenerateHousehold(h);
  int64_t sessions = 0, follow_ups = 0;
  for (const SimRequest& r : w.requests) {
    if (r.work_class != 5) {
      CHECK(r.encoder_spans.empty());
      continue;
    }
    REQUIRE(r.encoder_spans.size() == 1);
    const EncoderSpan& photo = r.encoder_spans[0];
    CHECK(photo.position == 0);
    CHECK(photo.length == 576);
    if (r.parent < 0) {
      ++sessions;
    } else {
      // A follow-up resends the photo in its history, with the same content.
      ++follow_ups;
      CHECK(r.shared_prefix_tokens >= 576);
      CHECK(w.requests[static_cast<size_t>(r.parent)].encoder_spans[0].content_hash ==
            photo.content_hash);
    }
  }
  REQUIRE(sessions > 5);
  REQUIRE(follow_ups > 0);
  auto r = RunSimulation(w, o);
  REQUIRE(r.ok());
  CHECK(r->report.total.finished == r->report.total.arrived);
  CHECK(r->report.classes[5].finished == static_cast<uint64_t>(sessions + follow_ups));
  // Every photo is encoded at least once; follow-ups that find its blocks
  // cached encode nothing.
  CHECK(cost.encoded() >= 576 * sessions);
  CHECK(cost.encoded() <= 576 * (sessions + follow_ups));
}

}  // namespace
}  // namespace hearth

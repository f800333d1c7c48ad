// SchedulerOptions::max_admission_waste_per_block: a waiting request evicts
// a running one only when the work thrown away is small beside the room it
// needs; a long context is not recomputed for a one-block admission.

#include <memory>

#include <catch2/catch.hpp>

#include "hearth/policy/policy_registry.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;

// A background request holding every block but one, decoding; then an
// urgent one-block request arrives. Returns the background request's phase
// after the urgent one's first chance at admission.
RequestPhase BackgroundAfterUrgentArrives(double max_waste_per_block) {
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 21;
  o.max_admission_waste_per_block = max_waste_per_block;
  o.work_classes = {{.name = "background", .priority = 0}, {.name = "urgent", .priority = 9}};
  // Without trunk reservation, so that the urgent request may evict.
  PolicyConfig config;
  config.priority.kv_reserve = 0;
  absl::StatusOr<PolicyFactory> factory = MakePolicyFactory("priority", config);
  REQUIRE(factory.ok());
  o.policy_factory = *factory;
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  SchedulerHarness& harness = **h;
  RequestSpec spec;
  spec.prompt_tokens = 320;  // 20 blocks; the first decode takes the 21st
  spec.max_new_tokens = 16;  // 21 blocks in all: it fits alone
  const RequestId background = *harness.Submit(spec);
  REQUIRE(harness.StepUntilDecoding(background).ok());
  spec.work_class = WorkClassId(1);
  spec.prompt_tokens = 4;
  spec.max_new_tokens = 4;
  REQUIRE(harness.Submit(spec).ok());
  REQUIRE(harness.Step().ok());
  auto v = harness.scheduler().GetRequest(background);
  REQUIRE(v.ok());
  return v->phase;
}

TEST_CASE("An admission does not recompute a long context for a block", "[scheduler]") {
  // 21 blocks thrown away for 1 needed: over the default 16 per block.
  CHECK(BackgroundAfterUrgentArrives(16) == RequestPhase::kRunning);
  CHECK(BackgroundAfterUrgentArrives(0) == RequestPhase::kRunning);
  // Allowed more, the urgent request evicts it.
  CHECK(BackgroundAfterUrgentArrives(100) != RequestPhase::kRunning);
}

}  // namespace
}  // namespace hearth

// Backfilling (Policy::MayAdmitPast, PolicyTreeConfig::backfill_wait): a
// request that fits passes one that cannot start yet, for a bounded time;
// after it the first holds the line again, so it is never overtaken forever.

#include <cstdint>
#include <memory>

#include <catch2/catch.hpp>

#include "hearth/policy/policy_registry.h"
#include "hearth/policy/policy_tree.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;

struct Outcome {
  RequestPhase large = RequestPhase::kQueued;
  RequestPhase small = RequestPhase::kQueued;
};

// A running request holds 13 of `blocks` (24) blocks; a large one (10 blocks) arrives,
// then a small one (1 block), both of the same class, so the large one ranks
// first and has no victim (the running one ranks before it). `wait_before`
// passes between the large one's arrival and the small one's.
Outcome AfterSmallArrives(absl::Duration backfill_wait, absl::Duration wait_before,
                          int32_t blocks = 24) {
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = blocks;
  o.work_classes = {{.name = "chat", .ttft_slo = absl::Seconds(2)}};
  PolicyTreeConfig tree = HouseholdTreeConfig();
  tree.backfill_wait = backfill_wait;
  absl::StatusOr<PolicyFactory> factory = PolicyTreeFactory(tree);
  REQUIRE(factory.ok());
  o.policy_factory = *factory;
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  SchedulerHarness& harness = **h;
  RequestSpec spec;
  spec.prompt_tokens = 200;  // 13 blocks
  spec.max_new_tokens = 64;
  const RequestId running = *harness.Submit(spec);
  REQUIRE(harness.StepUntilDecoding(running).ok());
  // 10 blocks: 11 are free, but the running request's growth headroom
  // (4 blocks) is kept. Once it is passed, 8 are (twice the headroom): the
  // small request's block fits beside them.
  spec.prompt_tokens = 150;
  const RequestId large = *harness.Submit(spec);
  REQUIRE(harness.Step().ok());
  harness.Advance(wait_before);
  spec.prompt_tokens = 8;
  spec.max_new_tokens = 4;
  const RequestId small = *harness.Submit(spec);
  REQUIRE(harness.Step().ok());
  Outcome out;
  out.large = harness.scheduler().GetRequest(large)->phase;
  out.small = harness.scheduler().GetRequest(small)->phase;
  // Whatever passed whom, everything ends and every block comes back.
  REQUIRE(harness.RunUntilIdle().ok());
  CHECK(harness.live().empty());
  return out;
}

TEST_CASE("Backfilling admits a request that fits past one that cannot start yet",
          "[scheduler]") {
  const Outcome out = AfterSmallArrives(absl::Seconds(10), absl::ZeroDuration());
  CHECK(out.large == RequestPhase::kWaiting);
  CHECK(out.small == RequestPhase::kRunning);
}

TEST_CASE("A backfilled request leaves twice the growth headroom", "[scheduler]") {
  // 21 blocks: 8 free, all of them the doubled headroom of the running
  // request, so the small one's block does not fit beside it.
  const Outcome out = AfterSmallArrives(absl::Seconds(10), absl::ZeroDuration(), 21);
  CHECK(out.large == RequestPhase::kWaiting);
  CHECK(out.small == RequestPhase::kWaiting);
}

TEST_CASE("Without backfilling the head of the line waits and so does the rest",
          "[scheduler]") {
  const Outcome out = AfterSmallArrives(absl::ZeroDuration(), absl::ZeroDuration());
  CHECK(out.large == RequestPhase::kWaiting);
  CHECK(out.small == RequestPhase::kWaiting);
}

TEST_CASE("A head that waited backfill_wait holds the line", "[scheduler]") {
  const Outcome out = AfterSmallArrives(absl::Seconds(10), absl::Seconds(11));
  CHECK(out.large == RequestPhase::kWaiting);
  CHECK(out.small == RequestPhase::kWaiting);
}

TEST_CASE("backfill_wait must not be negative", "[scheduler]") {
  PolicyTreeConfig tree = HouseholdTreeConfig();
  tree.backfill_wait = -absl::Seconds(1);
  absl::Status status = ValidatePolicyTreeConfig(tree);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Catch::Contains("backfill_wait"));
}

}  // namespace
}  // namespace hearth

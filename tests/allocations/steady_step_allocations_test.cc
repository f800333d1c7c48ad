// Plan and Complete are the hot path: a steady step must not touch the heap,
// for every policy the registry builds and for the core's step variants
// (overlapped planning, speculative drafts). This executable links the
// benchmarks' counting operator new (bench/common/alloc_counter.cc), so it
// counts every allocation the process makes; the fixture is the benchmarks'
// own, so the property the benchmarks report is the one asserted here.

#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "bench/common/alloc_counter.h"
#include "bench/common/steady_decode.h"
#include "hearth/exec/engine_loop.h"
#include "hearth/policy/policy_registry.h"

namespace hearth {
namespace {

using bench::AllocationCount;
using bench::SteadyDecode;

constexpr int32_t kRunning = 256;
constexpr int32_t kWaiting = 2000;
constexpr int kMeasuredSteps = 300;

PolicyFactory Factory(const std::string& name, bool member_guard = true) {
  PolicyConfig config;
  config.vtc.user_weights = {1, 2, 3, 4};
  config.household_member_guard = member_guard;
  absl::StatusOr<PolicyFactory> factory = MakePolicyFactory(name, config);
  REQUIRE(factory.ok());
  return *factory;
}

// Allocations made by `steps` steps of `fixture` after its warm-up.
uint64_t AllocationsOver(SteadyDecode& fixture, int steps) {
  const uint64_t before = AllocationCount();
  for (int i = 0; i < steps; ++i) fixture.Step();
  return AllocationCount() - before;
}

TEST_CASE("A steady decode step allocates nothing, under every policy", "[allocations]") {
  const std::string name = GENERATE("fifo", "vtc", "priority", "mlfq", "household");
  CAPTURE(name);
  // Warmed up as the policy benchmark is: policies that time-slice never
  // reach an all-decode step.
  SteadyDecode fixture(kRunning, kWaiting, Factory(name), kMeasuredSteps + 400, /*users=*/4,
                       /*fixed_warmup=*/200);
  CHECK(AllocationsOver(fixture, kMeasuredSteps) == 0);
}

TEST_CASE("A steady step allocates nothing without the member guard", "[allocations]") {
  SteadyDecode fixture(kRunning, kWaiting, Factory("household", /*member_guard=*/false),
                       kMeasuredSteps + 400, /*users=*/4, /*fixed_warmup=*/200);
  CHECK(AllocationsOver(fixture, kMeasuredSteps) == 0);
}

TEST_CASE("Overlapped and speculative steps allocate nothing", "[allocations]") {
  const std::string name = GENERATE("fifo", "household");
  CAPTURE(name);
  SECTION("overlapped planning") {
    SteadyDecode fixture(kRunning, kWaiting, Factory(name), kMeasuredSteps + 400, /*users=*/4,
                         /*fixed_warmup=*/0, /*draft_tokens=*/0, /*overlap=*/true);
    CHECK(AllocationsOver(fixture, kMeasuredSteps) == 0);
  }
  SECTION("four draft tokens per decode") {
    SteadyDecode fixture(kRunning, kWaiting, Factory(name), kMeasuredSteps + 400, /*users=*/4,
                         /*fixed_warmup=*/0, /*draft_tokens=*/4);
    CHECK(AllocationsOver(fixture, kMeasuredSteps) == 0);
  }
}

// The stand-in engine of SteadyDecode, as an executor: one ordinary token
// per sampling sequence.
class TokenExecutor : public StepExecutor {
 public:
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override {
    for (const ScheduledSequence& s : plan.sequences) {
      SequenceOutcome& o = outcome->sequences.emplace_back();
      o.id = s.id;
      o.produced_token = s.sample;
      o.token = 1;
    }
    return absl::OkStatus();
  }
};

// The hooks a host's loop runs each step, doing nothing.
class StampingHooks : public EngineHooks {
  void OnExecuted(const StepPlan& plan, const absl::Status&, StepOutcome& outcome) override {
    outcome.completed_at = plan.now + absl::Milliseconds(20);
  }
};

TEST_CASE("An EngineLoop step in steady decode allocates nothing", "[allocations]") {
  SteadyDecode fixture(kRunning, kWaiting, Factory("household"), 2 * kMeasuredSteps + 400);
  TokenExecutor executor;
  EngineLoop loop(fixture.scheduler(), executor);
  StampingHooks hooks;
  absl::Time now = absl::UnixEpoch() + absl::Hours(1);
  // The loop's outcome buffer grows to the batch in its first steps.
  for (int i = 0; i < kMeasuredSteps; ++i) {
    REQUIRE(loop.Step(now += absl::Milliseconds(20), hooks).ok());
  }
  bool ok = true;
  const uint64_t before = AllocationCount();
  for (int i = 0; i < kMeasuredSteps; ++i) {
    ok = loop.Step(now += absl::Milliseconds(20), hooks).ok() && ok;
  }
  const uint64_t allocations = AllocationCount() - before;
  REQUIRE(ok);
  CHECK(allocations == 0);
  CHECK(loop.last_step().sequences == kRunning);
}

// The counter itself: a test that cannot fail proves nothing.
TEST_CASE("The counting allocator sees an allocation", "[allocations]") {
  const uint64_t before = AllocationCount();
  auto* volatile p = new int(7);
  delete p;
  CHECK(AllocationCount() - before == 1);
}

}  // namespace
}  // namespace hearth

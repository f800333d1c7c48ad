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

// The counter itself: a test that cannot fail proves nothing.
TEST_CASE("The counting allocator sees an allocation", "[allocations]") {
  const uint64_t before = AllocationCount();
  auto* volatile p = new int(7);
  delete p;
  CHECK(AllocationCount() - before == 1);
}

}  // namespace
}  // namespace hearth

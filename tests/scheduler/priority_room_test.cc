// Trunk reservation in the "priority" policy (PriorityQuotaOptions::
// kv_reserve): a request leaves free a share of the cache that grows as its
// level falls below the highest class priority, is waived after an aging
// interval, and with it a waiting request evicts no one.

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "hearth/policy/policy_registry.h"
#include "hearth/policy/priority_quota.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

constexpr uint32_t kLow = 0, kMid = 1, kTop = 2;
constexpr absl::Duration kAging = absl::Seconds(60);

std::unique_ptr<SchedulerHarness> Priority(int32_t blocks, double reserve,
                                           std::vector<int32_t> priorities = {0, 1, 2}) {
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = blocks;
  o.kv.growth_headroom_tokens = 0;
  o.max_admission_waste_per_block = 1000;
  o.work_classes.clear();
  for (size_t i = 0; i < priorities.size(); ++i) {
    o.work_classes.push_back({.name = absl::StrCat("class", i), .priority = priorities[i]});
  }
  PolicyConfig config;
  config.priority.kv_reserve = reserve;
  config.priority.aging_interval = kAging;
  absl::StatusOr<PolicyFactory> factory = MakePolicyFactory("priority", config);
  REQUIRE(factory.ok());
  o.policy_factory = *factory;
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return std::move(*h);
}

// Runs a request of class `cls` until it decodes.
RequestId HoldDecoding(SchedulerHarness& h, uint32_t cls, int32_t prompt, int32_t output) {
  const RequestId id = *h.Submit(Spec({.work_class = cls, .prompt = prompt, .max_new = output}));
  REQUIRE(h.StepUntilDecoding(id).ok());
  return id;
}

// 40 blocks, reserve 0.5: the lowest class leaves 20 free, the middle one
// 10, the top one none. A decoding top request holds 10, so 30 are free.
TEST_CASE("Lower priority levels leave more of the cache free", "[scheduler][priority]") {
  for (const auto& [cls, prompt, admitted] :
       {std::tuple{kLow, 240, false},    // 15 + 20 > 30
        std::tuple{kLow, 128, true},     // 8 + 20 <= 30
        std::tuple{kMid, 240, true},     // 15 + 10 <= 30
        std::tuple{kMid, 352, false},    // 22 + 10 > 30
        std::tuple{kTop, 464, true}}) {  // 29 + 0 <= 30
    auto h = Priority(40, 0.5);
    HoldDecoding(*h, kTop, 150, 16);
    const RequestId id = *h->Submit(Spec({.work_class = cls, .prompt = prompt, .max_new = 4}));
    REQUIRE(h->Step().ok());
    INFO("class " << cls << ", prompt " << prompt);
    CHECK((h->scheduler().GetRequest(id)->phase == RequestPhase::kRunning) == admitted);
    REQUIRE(h->RunUntilIdle().ok());
    CHECK(h->live().empty());
  }
}

TEST_CASE("The reserve is waived after an aging interval", "[scheduler][priority]") {
  auto h = Priority(40, 0.5);
  HoldDecoding(*h, kTop, 150, 400);
  const RequestId low = *h->Submit(Spec({.work_class = kLow, .prompt = 240, .max_new = 4}));
  REQUIRE(h->Step().ok());
  CHECK(h->scheduler().GetRequest(low)->phase == RequestPhase::kWaiting);
  h->Advance(kAging);
  REQUIRE(h->Step().ok());
  CHECK(h->scheduler().GetRequest(low)->phase == RequestPhase::kRunning);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->live().empty());
}

TEST_CASE("With one class priority nobody keeps room", "[scheduler][priority]") {
  auto h = Priority(40, 0.5, {1, 1});
  HoldDecoding(*h, 1, 150, 16);
  const RequestId id =
      *h->Submit(Spec({.work_class = 0, .prompt = 448, .max_new = 4}));  // 28 of 30 free
  REQUIRE(h->Step().ok());
  CHECK(h->scheduler().GetRequest(id)->phase == RequestPhase::kRunning);
  REQUIRE(h->RunUntilIdle().ok());
}

// A low request decoding in 30 of 32 blocks (admitted alone: the reserve
// does not bind without room to keep), then a top request needing 4.
TEST_CASE("With a reserve a waiting request evicts no one", "[scheduler][priority]") {
  for (const auto& [reserve, evicted] : {std::tuple{0.25, false}, std::tuple{0.0, true}}) {
    auto h = Priority(32, reserve);
    const RequestId low = HoldDecoding(*h, kLow, 470, 8);
    REQUIRE(h->Submit(Spec({.work_class = kTop, .prompt = 60, .max_new = 4})).ok());
    REQUIRE(h->Step().ok());
    INFO("reserve " << reserve);
    CHECK((h->scheduler().GetRequest(low)->phase != RequestPhase::kRunning) == evicted);
    REQUIRE(h->RunUntilIdle().ok());
    CHECK(h->live().empty());
  }
}

TEST_CASE("kv_reserve is validated", "[priority]") {
  PriorityQuotaOptions options;
  CHECK(options.kv_reserve == kDefaultPriorityKvReserve);
  for (double bad : {-0.1, 1.0, 2.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    options.kv_reserve = bad;
    INFO("kv_reserve " << bad);
    CHECK(ValidatePriorityQuotaOptions(options).code() == absl::StatusCode::kInvalidArgument);
    CHECK(!PriorityQuotaPolicyFactory(options).ok());
  }
  options.kv_reserve = 0;
  CHECK(ValidatePriorityQuotaOptions(options).ok());
}

}  // namespace
}  // namespace hearth

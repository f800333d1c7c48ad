// What the household preset keeps for interactive work: a share of the cache
// that background requests (no TTFT target) may not admit into, and a cap on
// their prefill tokens per step while anything decodes.

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/policy_registry.h"
#include "hearth/policy/policy_tree.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

constexpr uint32_t kVoice = 0, kDocuments = 1;

std::unique_ptr<SchedulerHarness> Household(int32_t blocks, double reserve,
                                            int32_t background_prefill,
                                            int32_t host_blocks = 0) {
  SchedulerOptions o;
  if (host_blocks > 0) {
    o.kv.num_host_blocks = host_blocks;
    o.preemption_mode = PreemptionMode::kSwap;
  }
  o.kv.block_size = 16;
  o.kv.num_device_blocks = blocks;
  o.kv.growth_headroom_tokens = 0;
  o.max_batched_tokens = 512;
  o.max_prefill_chunk_tokens = 256;
  o.work_classes = {{.name = "voice", .ttft_slo = absl::Milliseconds(500)},
                    {.name = "documents"}};
  PolicyTreeConfig tree = HouseholdTreeConfig();
  tree.background_kv_reserve = reserve;
  tree.background_prefill_tokens = background_prefill;
  absl::StatusOr<PolicyFactory> factory = PolicyTreeFactory(tree);
  REQUIRE(factory.ok());
  o.policy_factory = *factory;
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return std::move(*h);
}

// 40 blocks, a quarter (10) reserved, 10 held by a decoding voice request:
// a document of 25 blocks waits (30 free < 25 + 10), one of 18 starts, and a
// voice request of 25 blocks is not held to the reserve.
TEST_CASE("Background requests do not admit into the reserved share", "[scheduler]") {
  for (const auto& [cls, prompt, admitted] :
       {std::tuple{kDocuments, 400, false}, std::tuple{kDocuments, 288, true},
        std::tuple{kVoice, 400, true}}) {
    auto h = Household(40, 0.25, 0);
    const RequestId holder = *h->Submit(Spec({.work_class = kVoice, .prompt = 150, .max_new = 8}));
    REQUIRE(h->StepUntilDecoding(holder).ok());
    const RequestId id = *h->Submit(Spec({.work_class = cls, .prompt = prompt, .max_new = 4}));
    REQUIRE(h->Step().ok());
    INFO("class " << cls << ", prompt " << prompt);
    CHECK((h->scheduler().GetRequest(id)->phase == RequestPhase::kRunning) == admitted);
    REQUIRE(h->RunUntilIdle().ok());
    CHECK(h->live().empty());
  }
}

TEST_CASE("A request larger than the unreserved share still runs alone", "[scheduler]") {
  auto h = Household(40, 0.25, 0);
  const RequestId id =
      *h->Submit(Spec({.work_class = kDocuments, .prompt = 600, .max_new = 4}));  // 38 blocks of 40
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(id).phase == RequestPhase::kFinished);
}

// A decoding voice request and a long document: the document's prefill gets
// the cap each step while the voice request decodes, and full chunks alone.
TEST_CASE("Background prefill is capped per step while anything decodes", "[scheduler]") {
  for (int32_t cap : {0, 64}) {
    auto h = Household(400, 0, cap);
    h->keep_history(true);
    const RequestId voice = *h->Submit(Spec({.work_class = kVoice, .prompt = 16, .max_new = 8}));
    REQUIRE(h->Step().ok());
    const RequestId document =
        *h->Submit(Spec({.work_class = kDocuments, .prompt = 3000, .max_new = 4}));
    int32_t largest_beside_decode = 0, largest_alone = 0;
    REQUIRE(h->RunUntilIdle().ok());
    for (const auto& plan : h->history()) {
      const auto* d = plan.Find(document);
      if (d == nullptr || d->start_position >= 3000) continue;  // prefill only
      const bool beside = plan.Find(voice) != nullptr;
      int32_t& largest = beside ? largest_beside_decode : largest_alone;
      largest = std::max(largest, d->num_tokens);
    }
    INFO("cap " << cap);
    CHECK(h->results().at(document).phase == RequestPhase::kFinished);
    CHECK(largest_alone == 256);
    if (cap == 0) {
      CHECK(largest_beside_decode == 256);
    } else {
      CHECK(largest_beside_decode == cap);
    }
  }
}

// 40 blocks, a fifth reserved; a long document decodes in 30 of them and a
// voice request needing 16 arrives. Recompute preemption would throw the
// document's context away, so the voice request waits for it to end. Over a
// host tier the document is paused (swapped out) once the voice request has
// spent half its target, and resumes after it.
TEST_CASE("Over a host tier a waiting voice request pauses background work", "[scheduler]") {
  for (const int32_t host_blocks : {0, 64}) {
    auto h = Household(40, 0.2, 0, host_blocks);
    h->keep_history(true);
    const RequestId document =
        *h->Submit(Spec({.work_class = kDocuments, .prompt = 470, .max_new = 150}));
    REQUIRE(h->StepUntilDecoding(document).ok());
    const auto submitted_after = static_cast<int>(h->last_plan().step);
    const RequestId voice = *h->Submit(Spec({.work_class = kVoice, .prompt = 250, .max_new = 4}));
    for (int i = 0; i < 4; ++i) {
      REQUIRE(h->Step().ok());
      h->Advance(absl::Milliseconds(100));
    }
    REQUIRE(h->RunUntilIdle().ok());
    INFO("host blocks " << host_blocks);
    int voice_admitted_step = -1, document_last_step = -1;
    std::vector<Preemption> preempted;
    for (const auto& plan : h->history()) {
      if (voice_admitted_step < 0 && plan.Find(voice) != nullptr) {
        voice_admitted_step = static_cast<int>(plan.step);
      }
      if (plan.Find(document) != nullptr) document_last_step = static_cast<int>(plan.step);
      preempted.insert(preempted.end(), plan.preempted.begin(), plan.preempted.end());
    }
    REQUIRE(h->results().at(voice).phase == RequestPhase::kFinished);
    REQUIRE(h->results().at(document).phase == RequestPhase::kFinished);
    CHECK(h->live().empty());
    if (host_blocks == 0) {
      CHECK(preempted.empty());
      CHECK(voice_admitted_step > document_last_step);
    } else {
      REQUIRE(preempted.size() == 1);
      CHECK(preempted[0].id == document);
      CHECK(preempted[0].mode == PreemptionMode::kSwap);
      CHECK(voice_admitted_step < document_last_step);
      // Not before half of the voice target (the fourth step, 300 ms on):
      // room that frees meanwhile costs no copy.
      CHECK(voice_admitted_step == submitted_after + 4);
      CHECK(h->results().at(document).preemptions == 1);
    }
  }
}

TEST_CASE("Household room options are validated", "[scheduler]") {
  PolicyTreeConfig tree = HouseholdTreeConfig();
  tree.background_kv_reserve = 1.0;
  CHECK(ValidatePolicyTreeConfig(tree).code() == absl::StatusCode::kInvalidArgument);
  tree.background_kv_reserve = -0.1;
  CHECK(ValidatePolicyTreeConfig(tree).code() == absl::StatusCode::kInvalidArgument);
  tree.background_kv_reserve = 0.2;
  tree.background_prefill_tokens = -1;
  CHECK(ValidatePolicyTreeConfig(tree).code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hearth

// A background class's completion target (WorkClassConfig::e2e_slo) under
// the household preset: a document is due once a quarter of its target has
// passed, and then starts ahead of a stream of interactive arrivals that
// would otherwise keep it waiting for its aging interval; a member whose
// queue holds most of the waiting requests gets no such priority.

#include <memory>
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/policy_tree.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

constexpr uint32_t kVoice = 0, kDocuments = 1;
constexpr absl::Duration kStep = absl::Milliseconds(100);

std::unique_ptr<SchedulerHarness> Household(absl::Duration document_target) {
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 40;
  o.kv.growth_headroom_tokens = 0;
  o.kv.enable_prefix_caching = false;
  o.max_batched_tokens = 512;
  o.max_prefill_chunk_tokens = 256;
  o.users = {{.name = "talker"}, {.name = "reader"}};
  o.work_classes = {{.name = "voice", .ttft_slo = absl::Milliseconds(500)},
                    {.name = "documents", .e2e_slo = document_target}};
  PolicyTreeConfig tree = HouseholdTreeConfig();
  tree.priority.aging_interval = absl::Seconds(60);
  // Head of line waits (no backfilling), so that a document ranked first
  // starts as soon as memory frees instead of being passed by voice calls.
  tree.backfill_wait = absl::ZeroDuration();
  o.policy_factory = *PolicyTreeFactory(tree);
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return std::move(*h);
}

// The talker keeps two voice calls waiting (8 blocks each, memory for
// five), so that memory freed by one always has a voice call ranked ahead of
// a document that is not due; the reader sends `documents` documents of 30
// blocks at the start. Returns when the first document was first admitted
// within 30 s, if it was.
std::optional<absl::Duration> FirstDocumentStart(absl::Duration document_target,
                                                 int documents) {
  auto h = Household(document_target);
  // Memory full of voice calls before the documents arrive.
  std::vector<RequestId> voice;
  for (int i = 0; i < 7; ++i) {
    voice.push_back(
        *h->Submit(Spec({.user = 0, .work_class = kVoice, .prompt = 100, .max_new = 20})));
  }
  for (int i = 0; i < 2; ++i) {
    REQUIRE(h->Step().ok());
    h->Advance(kStep);
  }
  const absl::Time start = h->now();
  RequestId first;
  for (int i = 0; i < documents; ++i) {
    const RequestId id =
        *h->Submit(Spec({.user = 1, .work_class = kDocuments, .prompt = 470, .max_new = 4}));
    if (i == 0) first = id;
  }
  std::optional<absl::Duration> started;
  for (int step = 0; step < 300 && !started; ++step) {
    int waiting = 0;
    for (RequestId id : voice) {
      absl::StatusOr<RequestView> v = h->scheduler().GetRequest(id);
      waiting += v.ok() && (v->phase == RequestPhase::kQueued ||
                            v->phase == RequestPhase::kWaiting);
    }
    for (; waiting < 2; ++waiting) {
      voice.push_back(
          *h->Submit(Spec({.user = 0, .work_class = kVoice, .prompt = 100, .max_new = 20})));
    }
    REQUIRE(h->Step().ok());
    if (h->last_plan().Find(first) != nullptr) started = h->now() - start;
    h->Advance(kStep);
  }
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->live().empty());
  return started;
}

TEST_CASE("A document is due a quarter of its completion target after arrival",
          "[scheduler]") {
  // Without a target it ranks by its 60 s aging interval: not within 30 s.
  CHECK_FALSE(FirstDocumentStart(absl::InfiniteDuration(), 1).has_value());
  // With 40 s it is due at 10 s and starts once memory frees for it.
  const std::optional<absl::Duration> due = FirstDocumentStart(absl::Seconds(40), 1);
  REQUIRE(due.has_value());
  CHECK(*due >= absl::Seconds(10));
  CHECK(*due <= absl::Seconds(15));
}

TEST_CASE("A member queueing most of the waiting requests gets no due priority",
          "[scheduler]") {
  // Twenty documents against the talker's two waiting calls: the reader's
  // flood waits for its aging interval like any background work.
  CHECK_FALSE(FirstDocumentStart(absl::Seconds(40), 20).has_value());
}

TEST_CASE("A completion target is validated like the other targets", "[scheduler]") {
  for (absl::Duration bad : {absl::ZeroDuration(), -absl::Seconds(1), kMaxSloTarget + absl::Seconds(1)}) {
    SchedulerOptions o;
    o.work_classes = {{.name = "documents", .e2e_slo = bad}};
    auto s = Scheduler::Create(std::move(o));
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(s.status().message()), Catch::Contains("e2e_slo"));
  }
}

}  // namespace
}  // namespace hearth

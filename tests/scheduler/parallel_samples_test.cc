// Parallel sampling (RequestSpec::num_samples): n requests of consecutive
// ids; sample 0 computes the prompt, the others wait for its first token and
// then reuse its cached blocks, computing only the last prompt position.
// Cancel of any sample cancels the group; the group is accepted or refused
// whole.

#include <catch2/catch.hpp>

#include <numeric>
#include <string>
#include <vector>

#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::PlanCopy;
using testing::SchedulerHarness;
using testing::Spec;

SchedulerOptions Options() {
  SchedulerOptions o;
  o.kv.block_size = 4;
  o.kv.num_device_blocks = 128;
  o.kv.enable_prefix_caching = true;
  o.max_running = 8;
  o.max_batched_tokens = 64;
  o.models[0].vocab_size = 100;
  return o;
}

RequestSpec Group(int32_t n, int32_t prompt = 30, int32_t max_new = 5) {
  RequestSpec spec = Spec({.prompt = prompt, .max_new = max_new});
  spec.prompt_token_ids.resize(static_cast<size_t>(prompt));
  std::iota(spec.prompt_token_ids.begin(), spec.prompt_token_ids.end(), 1);
  spec.num_samples = n;
  spec.handle = 500;
  return spec;
}

RequestId Sample(RequestId first, int k) { return RequestId(first.value() + k); }

TEST_CASE("Parallel samples: the prompt is computed once, each sample samples its own",
          "[scheduler][samples]") {
  auto h = *SchedulerHarness::Create(Options());
  h->keep_history(true);
  const RequestId first = *h->Submit(Group(4));
  REQUIRE(h->RunUntilIdle(100).ok());
  int32_t prefill_positions = 0;
  uint64_t first_token_step = 0;
  for (const PlanCopy& p : h->history()) {
    for (const PlanCopy::Sequence& s : p.sequences) {
      if (s.start_position + s.num_tokens <= 30) prefill_positions += s.num_tokens;
      if (s.id == first && s.sample && first_token_step == 0) first_token_step = p.step;
      if (s.id != first && s.start_position < 30) {
        // The others start after sample 0's first token, at its last
        // partial block: all 7 full blocks are shared.
        CHECK(p.step > first_token_step);
        CHECK(s.start_position == 28);
      }
    }
  }
  // 30 positions for sample 0, 2 for each other.
  CHECK(prefill_positions == 30 + 3 * 2);
  for (int k = 0; k < 4; ++k) {
    INFO("sample " << k);
    const RequestResult& r = h->results().at(Sample(first, k));
    CHECK(r.phase == RequestPhase::kFinished);
    CHECK(r.output_tokens == 5);
    CHECK(r.group == first);
    CHECK(r.sample_index == k);
    CHECK(r.handle == 500u + k);
    CHECK(r.cached_prompt_tokens == (k == 0 ? 0 : 28));
  }
}

TEST_CASE("Parallel samples: a one-token sample 0 still lets the others run",
          "[scheduler][samples]") {
  auto h = *SchedulerHarness::Create(Options());
  const RequestId first = *h->Submit(Group(3, 30, 1));
  REQUIRE(h->RunUntilIdle(100).ok());
  for (int k = 0; k < 3; ++k) CHECK(h->results().at(Sample(first, k)).output_tokens == 1);
}

TEST_CASE("Parallel samples: cancel of any sample cancels the group", "[scheduler][samples]") {
  auto h = *SchedulerHarness::Create(Options());
  // Before any Plan took them in, and once running.
  const RequestId queued = *h->Submit(Group(3));
  REQUIRE(h->scheduler().Cancel(Sample(queued, 2)).ok());
  const RequestId running = *h->Submit(Group(3, 30, 20));
  REQUIRE(h->Step().ok());
  REQUIRE(h->Step().ok());
  REQUIRE(h->scheduler().Cancel(running).ok());
  CHECK(h->scheduler().Cancel(Sample(running, 1)).code() == absl::StatusCode::kNotFound);
  REQUIRE(h->RunUntilIdle(50).ok());
  for (RequestId group : {queued, running}) {
    for (int k = 0; k < 3; ++k) {
      CHECK(h->results().at(Sample(group, k)).phase == RequestPhase::kCancelled);
    }
  }
}

TEST_CASE("Parallel samples: refused whole, with reasons", "[scheduler][samples]") {
  SchedulerOptions o = Options();
  o.users[0].max_queued_requests = 3;
  auto h = *SchedulerHarness::Create(o);
  absl::StatusOr<RequestId> four = h->Submit(Group(4));
  CHECK(four.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(h->scheduler().stats().waiting + h->scheduler().stats().held == 0);
  CHECK(h->Submit(Group(3)).ok());
  for (int32_t n : {0, -1, kMaxSamples + 1}) {
    const absl::Status s = h->Submit(Group(n)).status();
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(s.message()), Catch::Contains("num_samples is"));
  }
  RequestSpec embed = Group(2);
  embed.kind = RequestKind::kEmbed;
  embed.max_new_tokens = 0;
  CHECK_THAT(std::string(h->Submit(embed).status().message()),
             Catch::Contains("1 for an embedding"));
}

}  // namespace
}  // namespace hearth

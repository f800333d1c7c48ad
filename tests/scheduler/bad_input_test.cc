// Hostile values the adversarial review found crashing or overflowing: each
// now ends in a specific error naming the field and what is allowed, before
// any arithmetic or allocation uses it.

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/scheduler/scheduler.h"

namespace hearth {
namespace {

constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

struct BadOptions {
  const char* what;
  std::function<void(SchedulerOptions&)> apply;
  // The error names this field.
  const char* field;
};

SchedulerOptions WithResidency() {
  SchedulerOptions o;
  o.residency.device_memory_bytes = int64_t{1} << 34;
  o.models[0].kv_bytes_per_token = 1 << 17;
  o.models[0].weights_bytes = int64_t{1} << 33;
  return o;
}

TEST_CASE("Create rejects sizes it could not allocate or compute with", "[scheduler][bad_input]") {
  const std::vector<BadOptions> cases = {
      {"a step of INT32_MAX tokens and sequences",
       [](SchedulerOptions& o) { o.max_batched_tokens = o.max_running = kInt32Max; },
       "max_batched_tokens"},
      {"more running sequences than 2^20",
       [](SchedulerOptions& o) {
         o.max_batched_tokens = 1 << 24;
         o.max_running = (1 << 20) + 1;
       },
       "max_running"},
      {"a context of INT32_MAX positions",
       [](SchedulerOptions& o) { o.models[0].context_length = kInt32Max; },
       "context_length"},
      {"INT64_MAX KV bytes per token",
       [](SchedulerOptions& o) { o.models[0].kv_bytes_per_token = kInt64Max; },
       "kv_bytes_per_token"},
      {"INT64_MAX KV bytes per token with residency",
       [](SchedulerOptions& o) {
         o = WithResidency();
         o.models[0].kv_bytes_per_token = kInt64Max;
       },
       "kv_bytes_per_token"},
      {"INT64_MAX weight bytes with residency",
       [](SchedulerOptions& o) {
         o = WithResidency();
         o.models[0].weights_bytes = kInt64Max;
       },
       "weights_bytes"},
  };
  for (const BadOptions& c : cases) {
    INFO(c.what);
    SchedulerOptions o;
    c.apply(o);
    absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(o);
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.status().message()).find(c.field) != std::string::npos);
  }
  // The largest sizes allowed still build a scheduler.
  SchedulerOptions edge;
  edge.models[0].context_length = 1 << 30;
  edge.models[0].kv_bytes_per_token = int64_t{1} << 40;
  CHECK(Scheduler::Create(edge).ok());
}

TEST_CASE("KvBlocksForMemory never wraps", "[scheduler][bad_input]") {
  CHECK(KvBlocksForMemory(int64_t{1} << 34, kInt64Max, 16) == 0);
  CHECK(KvBlocksForMemory(kInt64Max, kInt64Max / 2, 4096) == 0);
  CHECK(KvBlocksForMemory(int64_t{1} << 20, 1 << 10, 16) == 64);
}

// A default scheduler with one submitted request of `max_new` tokens.
std::unique_ptr<Scheduler> OneRequest(int32_t max_new, RequestId* id) {
  auto s = *Scheduler::Create(SchedulerOptions{});
  RequestSpec spec;
  spec.prompt_tokens = 4;
  spec.max_new_tokens = max_new;
  *id = *s->Submit(spec);
  return s;
}

TEST_CASE("DrainResults with a null vector moves nothing and keeps the results",
          "[scheduler][bad_input]") {
  RequestId id;
  auto s = OneRequest(1, &id);
  REQUIRE(s->Cancel(id).ok());
  const StepPlan* plan = *s->Plan(absl::UnixEpoch());
  StepOutcome outcome;
  outcome.step = plan->step;
  REQUIRE(s->Complete(outcome).ok());
  CHECK(s->DrainResults(nullptr) == 0);
  std::vector<RequestResult> results;
  CHECK(s->DrainResults(&results) == 1);
  CHECK(results.at(0).id == id);
}

TEST_CASE("An outcome with a finish reason outside the enum is rejected whole",
          "[scheduler][bad_input]") {
  RequestId id;
  auto s = OneRequest(8, &id);
  const StepPlan* plan = *s->Plan(absl::UnixEpoch());
  REQUIRE(plan->sequences.size() == 1);
  StepOutcome outcome;
  outcome.step = plan->step;
  SequenceOutcome& o = outcome.sequences.emplace_back();
  o.id = id;
  o.produced_token = true;
  o.token = 1;
  o.finish = static_cast<FinishReason>(77);
  absl::Status bad = s->Complete(outcome);
  CHECK(bad.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.message()).find("not a FinishReason") != std::string::npos);
  // Nothing was applied: the corrected outcome is still accepted.
  o.finish = FinishReason::kNone;
  CHECK(s->Complete(outcome).ok());
}

}  // namespace
}  // namespace hearth

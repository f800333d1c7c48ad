// What a real engine needs from the contract: host handles echoed in plans
// and results, out-of-KV preemption by the engine, retries reported as
// retries, Cancel with a reason (and the race with the last token), the
// idle wake-up (NextEventTime, WaitForWork) and the published stats.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/scheduler/scheduler.h"

namespace hearth {
namespace {

std::unique_ptr<Scheduler> Make(int32_t blocks = 64) {
  SchedulerOptions o;
  o.kv.num_device_blocks = blocks;
  o.max_batched_tokens = 256;
  return *Scheduler::Create(o);
}

RequestId SubmitOne(Scheduler& s, uint64_t handle, int32_t prompt = 20, int32_t out = 4) {
  RequestSpec spec;
  spec.prompt_tokens = prompt;
  spec.max_new_tokens = out;
  spec.handle = handle;
  return *s.Submit(spec);
}

// Every sequence runs; the plan's samples produce token 1, no finish.
StepOutcome RunAll(const StepPlan& plan) {
  StepOutcome outcome;
  outcome.step = plan.step;
  for (const ScheduledSequence& s : plan.sequences) {
    SequenceOutcome& o = outcome.sequences.emplace_back();
    o.id = s.id;
    o.produced_token = s.sample;
    o.token = 1;
  }
  return outcome;
}

absl::Time At(int s) { return absl::UnixEpoch() + absl::Seconds(s); }

TEST_CASE("Host handles are echoed in sequences, preemptions, releases and results",
          "[scheduler]") {
  auto s = Make();
  const RequestId a = SubmitOne(*s, 0xA11CE);
  const RequestId b = SubmitOne(*s, 0xB0B);
  const StepPlan* p = *s->Plan(At(1));
  REQUIRE(p->sequences.size() == 2);
  for (const ScheduledSequence& q : p->sequences) {
    CHECK(q.handle == (q.id == a ? 0xA11CEu : 0xB0Bu));
  }
  // `b` runs out of KV in the engine: the next plan drops it, with its handle.
  StepOutcome o = RunAll(*p);
  for (SequenceOutcome& so : o.sequences) {
    if (so.id == b) so.out_of_kv = true;
  }
  REQUIRE(s->Complete(o).ok());
  REQUIRE(s->Cancel(a, "user hung up").ok());
  p = *s->Plan(At(2));
  REQUIRE(p->preempted.size() == 1);
  CHECK(p->preempted[0].id == b);
  CHECK(p->preempted[0].handle == 0xB0B);
  CHECK(p->preempted[0].cause == PreemptionCause::kEngineOutOfKv);
  REQUIRE(p->released.size() == 1);
  CHECK(p->released[0].id == a);
  CHECK(p->released[0].handle == 0xA11CE);
  REQUIRE(s->Complete(RunAll(*p)).ok());
  std::vector<RequestResult> results;
  s->DrainResults(&results);
  REQUIRE(results.size() == 1);
  CHECK(results[0].handle == 0xA11CE);
  CHECK(results[0].phase == RequestPhase::kCancelled);
  CHECK(results[0].message.rfind("user hung up", 0) == 0);
}

TEST_CASE("An engine that keeps finding no KV for a request fails it, with the count",
          "[scheduler]") {
  SchedulerOptions o;
  o.kv.num_device_blocks = 64;
  o.max_out_of_kv_reports = 3;
  auto s = *Scheduler::Create(o);
  const RequestId stuck = SubmitOne(*s, 1, /*prompt=*/40, /*out=*/4);
  const RequestId fine = SubmitOne(*s, 2, /*prompt=*/8, /*out=*/30);
  std::vector<RequestResult> results;
  int refused = 0;
  bool token_given = false;
  // The engine has room for `fine` only; `stuck` is refused every time it
  // runs, except once after its second refusal, when it produces its first
  // token: that starts its count afresh.
  for (int t = 1; t < 200 && results.size() < 2; ++t) {
    const StepPlan* p = *s->Plan(At(t));
    StepOutcome out = RunAll(*p);
    for (SequenceOutcome& so : out.sequences) {
      if (so.id != stuck) continue;
      if (!token_given && refused == 2 && so.produced_token) {
        token_given = true;
        continue;
      }
      so.out_of_kv = true;
      ++refused;
    }
    REQUIRE(s->Complete(out).ok());
    s->DrainResults(&results);
  }
  REQUIRE(token_given);
  REQUIRE(results.size() == 2);
  for (const RequestResult& r : results) {
    if (r.id == fine) {
      CHECK(r.phase == RequestPhase::kFinished);
      continue;
    }
    CHECK(r.phase == RequestPhase::kFailed);
    CHECK(r.output_tokens == 1);
    // Two reports before the token, three after it: the last one fails it.
    CHECK(r.preemptions == 4);
    CHECK_THAT(r.message, Catch::Contains("out of KV 3 times without a token in between"));
  }
  SchedulerOptions bad;
  bad.max_out_of_kv_reports = 0;
  CHECK_THAT(std::string(Scheduler::Create(bad).status().message()),
             Catch::Contains("max_out_of_kv_reports"));
}

TEST_CASE("Out of KV from the engine is a recompute preemption under the same id",
          "[scheduler]") {
  auto s = Make();
  const RequestId id = SubmitOne(*s, 5, /*prompt=*/20, /*out=*/3);
  // Prefill and first token.
  const StepPlan* p = *s->Plan(At(1));
  REQUIRE(s->Complete(RunAll(*p)).ok());
  // The decode step: the engine has no KV for it.
  p = *s->Plan(At(2));
  REQUIRE(p->sequences.size() == 1);
  StepOutcome o = RunAll(*p);
  o.sequences[0].out_of_kv = true;
  o.sequences[0].produced_token = false;  // Ignored with out_of_kv either way.
  REQUIRE(s->Complete(o).ok());
  CHECK(s->GetRequest(id)->phase == RequestPhase::kWaiting);
  CHECK(s->GetRequest(id)->output_tokens == 1);
  CHECK(s->stats().preemptions == 1);
  CHECK(s->stats().engine_out_of_kv_preemptions == 1);
  CHECK(s->stats().retries == 0);
  // Listed once, not scheduled in the same plan; then recomputed from 0.
  p = *s->Plan(At(3));
  CHECK(p->sequences.empty());
  REQUIRE(p->preempted.size() == 1);
  REQUIRE(s->Complete(RunAll(*p)).ok());
  p = *s->Plan(At(4));
  REQUIRE(p->sequences.size() == 1);
  CHECK(p->sequences[0].id == id);
  CHECK(p->sequences[0].start_position == 0);
  CHECK(p->sequences[0].num_tokens == 21);  // Prompt plus the token kept.
  CHECK(p->sequences[0].full_block_table);
  std::vector<RequestResult> results;
  for (int t = 5; results.empty() && t < 20; ++t) {
    REQUIRE(s->Complete(RunAll(*p)).ok());
    s->DrainResults(&results);
    if (results.empty()) p = *s->Plan(At(t));
  }
  REQUIRE(results.size() == 1);
  CHECK(results[0].id == id);
  CHECK(results[0].phase == RequestPhase::kFinished);
  CHECK(results[0].output_tokens == 3);
  CHECK(results[0].preemptions == 1);
  CHECK(results[0].retries == 0);
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("An engine failure that is retried is listed and counted as a retry", "[scheduler]") {
  SchedulerOptions o;
  o.kv.num_device_blocks = 64;
  o.work_classes[0].max_retries = 1;
  auto s = *Scheduler::Create(o);
  const RequestId id = SubmitOne(*s, 9);
  const StepPlan* p = *s->Plan(At(1));
  StepOutcome out = RunAll(*p);
  out.sequences[0].error = "device lost";
  REQUIRE(s->Complete(out).ok());
  p = *s->Plan(At(2));
  REQUIRE(p->preempted.size() == 1);
  CHECK(p->preempted[0].id == id);
  CHECK(p->preempted[0].handle == 9);
  CHECK(p->preempted[0].cause == PreemptionCause::kRetry);
  CHECK(s->stats().retries == 1);
  CHECK(s->stats().preemptions == 0);
  REQUIRE(s->Complete(RunAll(*p)).ok());
}

TEST_CASE("A Cancel racing the last token: the request ends finished, as documented",
          "[scheduler]") {
  auto s = Make();
  const RequestId id = SubmitOne(*s, 1, /*prompt=*/8, /*out=*/1);
  const StepPlan* p = *s->Plan(At(1));
  // The host cancels while the step that produces the last token runs.
  REQUIRE(s->Cancel(id, "too slow").ok());
  REQUIRE(s->Complete(RunAll(*p)).ok());
  REQUIRE(s->Complete(RunAll(**s->Plan(At(2)))).ok());
  std::vector<RequestResult> results;
  s->DrainResults(&results);
  REQUIRE(results.size() == 1);
  CHECK(results[0].phase == RequestPhase::kFinished);
  CHECK(results[0].finish_reason == FinishReason::kLength);
  // The cancellation is dropped; the id is unknown from now on.
  CHECK(s->Cancel(id).code() == absl::StatusCode::kNotFound);
}

TEST_CASE("Cancel's reason leads the message of a request cancelled while queued",
          "[scheduler]") {
  auto s = Make();
  const RequestId id = SubmitOne(*s, 3);
  REQUIRE(s->Cancel(id, "client disconnected").ok());
  REQUIRE(s->Complete(RunAll(**s->Plan(At(1)))).ok());
  std::vector<RequestResult> results;
  s->DrainResults(&results);
  REQUIRE(results.size() == 1);
  CHECK(results[0].message == "client disconnected (cancelled by the host while queued)");
  CHECK(results[0].handle == 3);
}

TEST_CASE("NextEventTime: now while work is live, never when idle", "[scheduler]") {
  auto s = Make();
  CHECK(s->NextEventTime() == absl::InfiniteFuture());
  // Nothing to do and a deadline already past: returns without sleeping.
  CHECK_FALSE(s->WaitForWork(-absl::InfiniteDuration()));
  CHECK_FALSE(s->WaitForWork(absl::ZeroDuration()));
  CHECK_FALSE(s->WaitForWork(absl::Milliseconds(1)));  // sleeps 1 ms, nothing came
  SubmitOne(*s, 1, 8, 1);
  CHECK(s->NextEventTime() == absl::InfinitePast());
  CHECK(s->WaitForWork(absl::InfiniteDuration()));  // Queued work: no sleep.
  const StepPlan* p = *s->Plan(At(1));
  CHECK(s->NextEventTime() == absl::InfinitePast());
  REQUIRE(s->Complete(RunAll(*p)).ok());
  // Ended, but the engine is still owed its release.
  CHECK(s->NextEventTime() == absl::InfinitePast());
  REQUIRE(s->Complete(RunAll(**s->Plan(At(2)))).ok());
  CHECK(s->NextEventTime() == absl::InfiniteFuture());
  s->Wake();
  CHECK(s->WaitForWork(absl::InfiniteDuration()));  // Woken: no sleep.
}

TEST_CASE("NextEventTime is a model's keep-alive unload when idle", "[scheduler]") {
  constexpr int64_t kPerToken = 1024;
  SchedulerOptions o;
  o.kv.num_device_blocks = 64;
  o.models = {{.name = "m", .kv_bytes_per_token = kPerToken,
               .weights_bytes = 8 * kPerToken * o.kv.block_size,
               .keep_alive = absl::Seconds(30)}};
  o.residency.device_memory_bytes = 128 * kPerToken * o.kv.block_size;
  auto created = Scheduler::Create(o);
  REQUIRE(created.ok());
  auto s = *std::move(created);
  SubmitOne(*s, 1, 8, 1);
  absl::Time t = At(1);
  std::vector<RequestResult> results;
  for (int i = 0; results.empty() && i < 10; ++i, t += absl::Seconds(1)) {
    REQUIRE(s->Complete(RunAll(**s->Plan(t))).ok());
    s->DrainResults(&results);
  }
  REQUIRE(results.size() == 1);
  REQUIRE(s->Complete(RunAll(**s->Plan(t))).ok());  // The release.
  const absl::Time next = s->NextEventTime();
  CHECK(next == results[0].end_time + absl::Seconds(30));
  const StepPlan* p = *s->Plan(next);
  REQUIRE(p->model_commands.size() == 1);
  CHECK(p->model_commands[0].kind == ModelCommandKind::kUnload);
  REQUIRE(s->Complete(RunAll(*p)).ok());
  CHECK(s->NextEventTime() == absl::InfiniteFuture());
}

TEST_CASE("PublishedStats is stats() as of the last Plan or Complete", "[scheduler]") {
  auto s = Make();
  CHECK(s->PublishedStats().steps == 0);
  SubmitOne(*s, 1, 8, 2);
  const StepPlan* p = *s->Plan(At(1));
  CHECK(s->PublishedStats().steps == 1);
  CHECK(s->PublishedStats().running == 1);
  REQUIRE(s->Complete(RunAll(*p)).ok());
  REQUIRE(s->Complete(RunAll(**s->Plan(At(2)))).ok());
  CHECK(s->PublishedStats().finished == 1);
  CHECK(s->PublishedStats().finished == s->stats().finished);
}

}  // namespace
}  // namespace hearth

// EngineLoop, the one Plan -> Execute -> Complete loop, and its failure
// policy: a failed step and a refused outcome both complete the step as
// failed, so the scheduler never keeps a plan no outcome will match, and no
// request is lost.

#include <catch2/catch.hpp>
#include <atomic>
#include <cstdint>
#include <random>
#include <vector>

#include "hearth/exec/cpu_reference_executor.h"
#include "hearth/exec/engine_loop.h"
#include "hearth/exec/step_outcome_fill.h"
#include "hearth/scheduler/scheduler.h"
#include "scheduling_harness.h"

namespace hearth {
namespace {

SchedulerOptions Options() {
  SchedulerOptions o;
  o.models[0].context_length = 256;
  o.models[0].vocab_size = 256;
  o.kv.num_device_blocks = 32;
  return o;
}

std::unique_ptr<StepExecutor> CpuExecutor(const SchedulerOptions& o) {
  auto e = testing::CpuExecutorFactory()(o);
  REQUIRE(e.ok());
  return *std::move(e);
}

RequestSpec Spec(int32_t prompt, int32_t max_new) {
  RequestSpec spec;
  spec.prompt_tokens = prompt;
  spec.max_new_tokens = max_new;
  return spec;
}

// Samples token 1 for every sequence that samples; fails the whole step
// while `fail` is set, and, with `fail_seed`, steps its hash picks. Atomic:
// with overlap, Execute runs on the loop's worker thread.
class TokenExecutor : public StepExecutor {
 public:
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override {
    ++steps;
    const uint32_t seed = fail_seed.load();
    if (fail.load() || (seed != 0 && (plan.step * seed) % 7 == 3)) {
      return absl::UnavailableError("the device fell over");
    }
    for (const ScheduledSequence& s : plan.sequences) {
      SequenceOutcome& o = outcome->sequences.emplace_back();
      o.id = s.id;
      if (s.sample) RecordSampledToken(1, false, o);
    }
    return absl::OkStatus();
  }
  std::atomic<bool> fail{false};
  std::atomic<uint32_t> fail_seed{0};
  std::atomic<int> steps{0};
};

// Records what the loop showed it; drops the last outcome entry while
// `corrupt` is set, which Complete must refuse.
class RecordingHooks : public EngineHooks {
 public:
  void OnPlanned(const StepPlan& plan) override { planned.push_back(plan.step); }
  void OnExecuted(const StepPlan& plan, const absl::Status& executed,
                  StepOutcome& outcome) override {
    executed_ok.push_back(executed.ok());
    if (executed.ok()) outcome.completed_at = plan.now + absl::Milliseconds(1);
    if (corrupt && !outcome.sequences.empty()) outcome.sequences.pop_back();
  }
  void OnCompleted(const StepOutcome& outcome) override {
    completed.push_back(outcome.step);
    for (const SequenceOutcome& o : outcome.sequences) failed_entries += !o.error.empty();
  }
  bool corrupt = false;
  std::vector<uint64_t> planned;
  std::vector<bool> executed_ok;
  std::vector<uint64_t> completed;
  int failed_entries = 0;
};

TEST_CASE("EngineLoop with the CPU executor finishes requests", "[exec]") {
  const SchedulerOptions o = Options();
  auto scheduler = Scheduler::Create(o);
  REQUIRE(scheduler.ok());
  auto executor = CpuExecutor(o);
  EngineLoop loop(**scheduler, *executor);
  RequestSpec spec = Spec(7, 5);
  spec.prompt_token_ids = {5, 6, 7, 8, 9, 10, 11};
  REQUIRE((*scheduler)->Submit(spec).ok());
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  for (int step = 0; step < 50 && results.empty(); ++step) {
    now += absl::Milliseconds(1);
    REQUIRE(loop.Step(now).ok());
    (*scheduler)->DrainResults(&results);
  }
  REQUIRE(results.size() == 1);
  CHECK(results[0].phase == RequestPhase::kFinished);
  CHECK(results[0].output_tokens == 5);
  // The executor forgot the request once the scheduler released it.
  now += absl::Milliseconds(1);
  REQUIRE(loop.Step(now).ok());
  CHECK(loop.last_step().sequences == 0);
  CHECK(static_cast<CpuReferenceExecutor&>(*executor).num_live_sequences() == 0);
}

TEST_CASE("A request without token ids fails with the executor's reason", "[exec]") {
  const SchedulerOptions o = Options();
  auto scheduler = Scheduler::Create(o);
  REQUIRE(scheduler.ok());
  auto executor = CpuExecutor(o);
  EngineLoop loop(**scheduler, *executor);
  REQUIRE((*scheduler)->Submit(Spec(7, 3)).ok());  // no prompt_token_ids
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  for (int step = 0; step < 10 && results.empty(); ++step) {
    now += absl::Milliseconds(1);
    REQUIRE(loop.Step(now).ok());
    (*scheduler)->DrainResults(&results);
  }
  REQUIRE(results.size() == 1);
  CHECK(results[0].phase == RequestPhase::kFailed);
  CHECK_THAT(results[0].message, Catch::Contains("prompt_token_ids"));
}

TEST_CASE("Policy (a): a refused Plan runs nothing and leaves the loop usable", "[exec]") {
  auto scheduler = *Scheduler::Create(Options());
  TokenExecutor executor;
  EngineLoop loop(*scheduler, executor);
  RecordingHooks hooks;
  REQUIRE(scheduler->Submit(Spec(8, 2)).ok());
  REQUIRE(loop.Step(absl::UnixEpoch() + absl::Seconds(1), hooks).ok());
  const absl::Status back = loop.Step(absl::UnixEpoch(), hooks);
  CHECK(back.code() == absl::StatusCode::kInvalidArgument);
  CHECK_FALSE(loop.last_step().planned);
  CHECK(hooks.planned.size() == 1);
  CHECK(executor.steps == 1);
  CHECK(loop.Step(absl::UnixEpoch() + absl::Seconds(2), hooks).ok());
}

TEST_CASE("Policy (b): a failed step completes its sequences as failed or retried", "[exec]") {
  SchedulerOptions o = Options();
  const int32_t retries = GENERATE(0, 2);
  o.work_classes.at(0).max_retries = retries;
  auto scheduler = *Scheduler::Create(o);
  TokenExecutor executor;
  executor.fail = true;
  EngineLoop loop(*scheduler, executor);
  RecordingHooks hooks;
  const RequestId id = *scheduler->Submit(Spec(8, 4));
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  for (int step = 0; step < 20 && results.empty(); ++step) {
    now += absl::Milliseconds(1);
    const absl::Status s = loop.Step(now, hooks);
    CHECK_FALSE(scheduler->plan_outstanding());
    if (loop.last_step().sequences > 0) {
      CHECK(s.code() == absl::StatusCode::kUnavailable);
      CHECK(loop.last_step().executor_failed);
    }
    scheduler->DrainResults(&results);
  }
  REQUIRE(results.size() == 1);
  CHECK(results[0].id == id);
  CHECK(results[0].phase == RequestPhase::kFailed);
  CHECK_THAT(results[0].message, Catch::Contains("the device fell over"));
  // Tried once, then once per retry; every try was completed and shown to
  // the hooks.
  CHECK(hooks.failed_entries == 1 + retries);
  CHECK(hooks.completed.size() == hooks.planned.size());
}

TEST_CASE("Policy (c): a refused outcome completes the step as failed", "[exec]") {
  auto scheduler = *Scheduler::Create(Options());
  TokenExecutor executor;
  EngineLoop loop(*scheduler, executor);
  RecordingHooks hooks;
  hooks.corrupt = true;
  const RequestId id = *scheduler->Submit(Spec(8, 4));
  const absl::Status s = loop.Step(absl::UnixEpoch(), hooks);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::Contains("Complete refused the outcome of step 1"));
  CHECK(loop.last_step().outcome_refused);
  CHECK_FALSE(loop.last_step().executor_failed);
  CHECK_FALSE(scheduler->plan_outstanding());
  std::vector<RequestResult> results;
  scheduler->DrainResults(&results);
  REQUIRE(results.size() == 1);
  CHECK(results[0].id == id);
  CHECK(results[0].phase == RequestPhase::kFailed);
  CHECK_THAT(results[0].message, Catch::Contains("report exactly one per planned sequence"));
  // The loop goes on: the next request runs to the end.
  hooks.corrupt = false;
  REQUIRE(scheduler->Submit(Spec(8, 2)).ok());
  absl::Time now = absl::UnixEpoch();
  for (int step = 0; step < 10 && results.size() < 2; ++step) {
    now += absl::Milliseconds(1);
    REQUIRE(loop.Step(now, hooks).ok());
    scheduler->DrainResults(&results);
  }
  REQUIRE(results.size() == 2);
  CHECK(results[1].phase == RequestPhase::kFinished);
}

// Property: whatever fails, each Step leaves no plan the loop does not know
// of, every request ends exactly once, and each failure is the one reported.
void CheckNoRequestIsLost(bool overlap, uint32_t seed) {
  SchedulerOptions o = Options();
  o.overlap_planning = overlap;
  o.work_classes.at(0).max_retries = 1;
  auto scheduler = *Scheduler::Create(o);
  TokenExecutor executor;
  EngineLoop loop(*scheduler, executor, {.overlap = overlap});
  RecordingHooks hooks;
  std::mt19937 random(seed);
  executor.fail_seed = seed;
  std::vector<RequestResult> results;
  int submitted = 0;
  absl::Time now = absl::UnixEpoch();
  for (int step = 0; step < 400; ++step) {
    if (submitted < 40 && random() % 3 == 0) {
      REQUIRE(scheduler->Submit(Spec(4 + random() % 40, 1 + random() % 8)).ok());
      ++submitted;
    }
    hooks.corrupt = random() % 11 == 0;
    now += absl::Milliseconds(1);
    const absl::Status s = loop.Step(now, hooks);
    const StepSummary& last = loop.last_step();
    CAPTURE(s.ToString());
    REQUIRE(last.planned);
    CHECK(s.ok() == (!last.executor_failed && !last.outcome_refused));
    if (last.outcome_refused) CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(scheduler->plan_outstanding() == loop.step_in_flight());
    scheduler->DrainResults(&results);
  }
  hooks.corrupt = false;
  // The step in flight may fail as it was bound to.
  (void)loop.Finish(hooks);
  REQUIRE_FALSE(loop.step_in_flight());
  executor.fail_seed = 0;
  for (int step = 0; step < 400 && static_cast<int>(results.size()) < submitted; ++step) {
    now += absl::Milliseconds(1);
    REQUIRE(loop.Step(now, hooks).ok());
    scheduler->DrainResults(&results);
  }
  REQUIRE(loop.Finish(hooks).ok());
  scheduler->DrainResults(&results);
  CHECK(static_cast<int>(results.size()) == submitted);
  CHECK_FALSE(scheduler->plan_outstanding());
  CHECK(hooks.completed.size() == hooks.executed_ok.size());
  CHECK(scheduler->CheckInvariants().ok());
}

TEST_CASE("No request is lost whatever the executor and hooks do", "[exec]") {
  const uint32_t seed = GENERATE(1u, 2u, 3u, 4u);
  const bool overlap = GENERATE(false, true);
  CAPTURE(seed, overlap);
  CheckNoRequestIsLost(overlap, seed);
}

}  // namespace
}  // namespace hearth

// The CPU reference executor behind hearth::RunIteration(), the loop body a
// simple host uses: tokens come out as when driven step by step, and a
// request the executor cannot compute ends as failed with its message.

#include <catch2/catch.hpp>
#include <vector>

#include "hearth/exec/cpu_reference_executor.h"
#include "hearth/exec/step_executor.h"
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

std::unique_ptr<StepExecutor> Executor(const SchedulerOptions& o) {
  auto e = testing::CpuExecutorFactory()(o);
  REQUIRE(e.ok());
  return *std::move(e);
}

TEST_CASE("RunIteration with the CPU executor finishes requests", "[exec]") {
  const SchedulerOptions o = Options();
  auto scheduler = Scheduler::Create(o);
  REQUIRE(scheduler.ok());
  auto executor = Executor(o);
  RequestSpec spec;
  spec.prompt_token_ids = {5, 6, 7, 8, 9, 10, 11};
  spec.prompt_tokens = 7;
  spec.max_new_tokens = 5;
  REQUIRE((*scheduler)->Submit(spec).ok());
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  for (int step = 0; step < 50 && results.empty(); ++step) {
    now += absl::Milliseconds(1);
    REQUIRE(RunIteration(**scheduler, *executor, now).ok());
    (*scheduler)->DrainResults(&results);
  }
  REQUIRE(results.size() == 1);
  CHECK(results[0].phase == RequestPhase::kFinished);
  CHECK(results[0].output_tokens == 5);
  // The executor forgot the request once the scheduler released it.
  now += absl::Milliseconds(1);
  REQUIRE(RunIteration(**scheduler, *executor, now).ok());
  CHECK(static_cast<CpuReferenceExecutor&>(*executor).num_live_sequences() == 0);
}

TEST_CASE("A request without token ids fails with the executor's reason",
          "[exec]") {
  const SchedulerOptions o = Options();
  auto scheduler = Scheduler::Create(o);
  REQUIRE(scheduler.ok());
  auto executor = Executor(o);
  RequestSpec spec;
  spec.prompt_tokens = 7;  // no prompt_token_ids
  spec.max_new_tokens = 3;
  REQUIRE((*scheduler)->Submit(spec).ok());
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  for (int step = 0; step < 10 && results.empty(); ++step) {
    now += absl::Milliseconds(1);
    REQUIRE(RunIteration(**scheduler, *executor, now).ok());
    (*scheduler)->DrainResults(&results);
  }
  REQUIRE(results.size() == 1);
  CHECK(results[0].phase == RequestPhase::kFailed);
  CHECK_THAT(results[0].message, Catch::Contains("prompt_token_ids"));
}

}  // namespace
}  // namespace hearth

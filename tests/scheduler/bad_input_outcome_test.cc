// Catalogue surface: StepOutcome, as Scheduler::Complete judges it against
// the outstanding plan. A rejected outcome changes nothing and leaves the
// plan outstanding, so after each row the honest outcome of the same plan
// must still be accepted (RequireStillServes answers it).

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {
namespace {

using testing::Spec;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

// How a row brings the scheduler to the plan it answers.
enum class Setup {
  // One request of 4 prompt tokens, its first plan: one prefill that samples.
  kOnePrefill,
  // The same with 2-token prefill chunks: the first chunk does not sample.
  kChunkWithoutSample,
  // Two requests planned together.
  kTwoSequences,
  // A model that is not preloaded: the plan loads it.
  kModelLoad,
};

void Configure(Setup setup, SchedulerOptions& o) {
  if (setup == Setup::kChunkWithoutSample) o.max_prefill_chunk_tokens = 2;
  if (setup == Setup::kModelLoad) {
    o.residency.device_memory_bytes = int64_t{1} << 30;
    o.models[0].kv_bytes_per_token = 1 << 10;
    o.models[0].weights_bytes = int64_t{1} << 20;
    o.models[0].preload = false;
  }
}

const StepPlan& Reach(Setup setup, LiveScheduler& live) {
  const RequestId first = live.Submit(Spec({.prompt = 4, .max_new = 8}));
  if (setup == Setup::kModelLoad) {
    // The request waits for its model: this plan only loads it.
    const StepPlan& plan = live.Plan();
    REQUIRE(plan.model_commands.size() == 1);
    return plan;
  }
  if (setup == Setup::kTwoSequences) live.Submit(Spec({.user = 1, .prompt = 4, .max_new = 8}));
  const StepPlan& plan = live.PlanUntilScheduled(first);
  if (setup == Setup::kTwoSequences) REQUIRE(plan.sequences.size() == 2);
  if (setup == Setup::kChunkWithoutSample) REQUIRE_FALSE(plan.sequences[0].sample);
  return plan;
}

// The honest outcome of the row's plan, spoiled by `spoil`, handed to
// Complete.
BadInputRow OutcomeRow(std::string name, Setup setup,
                       std::function<void(StepOutcome&, const StepPlan&)> spoil,
                       std::string message_has) {
  auto configure = [setup](SchedulerOptions& o) { Configure(setup, o); };
  auto misuse = [setup, spoil = std::move(spoil)](LiveScheduler& live) {
    const StepPlan& plan = Reach(setup, live);
    StepOutcome outcome = LiveScheduler::HonestOutcome(plan);
    spoil(outcome, plan);
    return live->Complete(outcome);
  };
  return LiveRow("outcome: " + name, configure, misuse, kInvalid, std::move(message_has));
}

std::vector<BadInputRow> StepAndTimeRows() {
  using O = StepOutcome&;
  using P = const StepPlan&;
  constexpr Setup kOne = Setup::kOnePrefill;
  return {
      OutcomeRow("step 0", kOne, [](O o, P) { o.step = 0; }, "answers step 0"),
      OutcomeRow("the previous plan's step", kOne, [](O o, P p) { o.step = p.step - 1; },
                 "but the outstanding plan is step"),
      OutcomeRow("a future step", kOne, [](O o, P p) { o.step = p.step + 1; },
                 "but the outstanding plan is step"),
      OutcomeRow("step UINT64_MAX", kOne, [](O o, P) { o.step = ~uint64_t{0}; },
                 "answers step 18446744073709551615"),
      OutcomeRow("completed before the plan's now", kOne,
                 [](O o, P p) { o.completed_at = p.now - absl::Nanoseconds(1); },
                 "before the plan's now"),
      OutcomeRow("completed at InfiniteFuture", kOne,
                 [](O o, P) { o.completed_at = absl::InfiniteFuture(); }, "or infinite"),
  };
}

std::vector<BadInputRow> SequenceRows() {
  using O = StepOutcome&;
  using P = const StepPlan&;
  constexpr Setup kOne = Setup::kOnePrefill;
  constexpr Setup kTwo = Setup::kTwoSequences;
  return {
      OutcomeRow("no sequences for a planned one", kOne, [](O o, P) { o.sequences.clear(); },
                 "outcome has 0 sequences"),
      OutcomeRow("one sequence too many", kOne,
                 [](O o, P) { o.sequences.push_back(o.sequences[0]); }, "planned 1"),
      OutcomeRow("one sequence too few", kTwo, [](O o, P) { o.sequences.pop_back(); },
                 "outcome has 1 sequences but step 1 planned 2"),
      OutcomeRow("10,000 sequences for one", kOne,
                 [](O o, P) { o.sequences.resize(10000, o.sequences[0]); }, "outcome has 10000"),
      OutcomeRow("sequences out of plan order", kTwo,
                 [](O o, P) { std::swap(o.sequences[0], o.sequences[1]); }, "plan order"),
      OutcomeRow("an id never issued", kOne, [](O o, P) { o.sequences[0].id = RequestId(999); },
                 "id 999 where the plan has"),
      OutcomeRow("the invalid id", kOne, [](O o, P) { o.sequences[0].id = RequestId(); },
                 "id <invalid>"),
      OutcomeRow("the other planned id twice", kTwo,
                 [](O o, P) { o.sequences[1].id = o.sequences[0].id; }, "sequence 1: id"),
      OutcomeRow("no token where the plan samples", kOne,
                 [](O o, P) { o.sequences[0].produced_token = false; },
                 "asked for a sampled token but none was produced"),
      OutcomeRow("a token where the plan does not sample", Setup::kChunkWithoutSample,
                 [](O o, P) { o.sequences[0].produced_token = true; },
                 "the plan did not sample"),
  };
}

std::vector<BadInputRow> TokenAndFinishRows() {
  using O = StepOutcome&;
  using P = const StepPlan&;
  constexpr Setup kOne = Setup::kOnePrefill;
  return {
      OutcomeRow("finish kLength from the engine", kOne,
                 [](O o, P) { o.sequences[0].finish = FinishReason::kLength; },
                 "kLength is decided by the scheduler"),
      // Was: accepted silently.
      OutcomeRow("finish FinishReason(77)", kOne,
                 [](O o, P) { o.sequences[0].finish = static_cast<FinishReason>(77); },
                 "finish 77 is not a FinishReason"),
      OutcomeRow("finish FinishReason(255)", kOne,
                 [](O o, P) { o.sequences[0].finish = static_cast<FinishReason>(255); },
                 "not a FinishReason"),
      OutcomeRow("a stop without a token", Setup::kChunkWithoutSample,
                 [](O o, P) { o.sequences[0].finish = FinishReason::kStopToken; },
                 "a finish reason needs a produced token"),
      OutcomeRow("token -1", kOne, [](O o, P) { o.sequences[0].token = -1; },
                 "token -1 is outside [0, 1000)"),
      OutcomeRow("token equal to vocab_size", kOne, [](O o, P) { o.sequences[0].token = 1000; },
                 "token 1000 is outside"),
      OutcomeRow("token INT32_MAX", kOne, [](O o, P) { o.sequences[0].token = kInt32Max; },
                 "is outside [0, 1000)"),
      OutcomeRow("token INT32_MIN", kOne, [](O o, P) { o.sequences[0].token = kInt32Min; },
                 "is outside [0, 1000)"),
  };
}

std::vector<BadInputRow> LoadRows() {
  using O = StepOutcome&;
  using P = const StepPlan&;
  return {
      OutcomeRow("a failed load the plan did not ask for", Setup::kOnePrefill,
                 [](O o, P) { o.failed_loads.push_back({ModelId(0), "boom"}); },
                 "did not ask to load"),
      OutcomeRow("a failed load of a model that does not exist", Setup::kModelLoad,
                 [](O o, P) { o.failed_loads.push_back({ModelId(5), "boom"}); },
                 "failed_loads names model 5"),
      OutcomeRow("a failed load of the invalid model id", Setup::kModelLoad,
                 [](O o, P) { o.failed_loads.push_back({ModelId(), "boom"}); },
                 "failed_loads names model <invalid>"),
  };
}

}  // namespace

std::vector<BadInputRow> OutcomeRows() {
  std::vector<BadInputRow> rows;
  for (auto part : {StepAndTimeRows, SequenceRows, TokenAndFinishRows, LoadRows}) {
    for (BadInputRow& row : part()) rows.push_back(std::move(row));
  }
  return rows;
}

TEST_CASE("Bad input: Complete rejects each outcome that does not answer its plan",
          "[scheduler][bad_input]") {
  RunRows(OutcomeRows());
}

}  // namespace hearth::catalogue

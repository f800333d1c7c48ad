// The shared engine-side helpers: how a sampled token becomes an outcome
// (stop tokens and finish reasons) and how a failed step is reported.

#include "hearth/exec/step_outcome_fill.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "hearth/exec/step_executor.h"
#include "plan_builder.h"

namespace hearth {
namespace {

using testing::Blocks;
using testing::PlanBuilder;

TEST_CASE("A sampled token ends the request exactly when it is the stop token",
          "[exec]") {
  struct Case {
    TokenId token;
    TokenId stop_token;
    FinishReason finish;
  };
  const std::vector<Case> cases = {
      {7, 7, FinishReason::kStopToken},  {7, 8, FinishReason::kNone},
      {0, 0, FinishReason::kStopToken},  {0, -1, FinishReason::kNone},
      {-1, -1, FinishReason::kNone},     {5, -5, FinishReason::kNone},
  };
  for (const Case& c : cases) {
    INFO("token " << c.token << ", stop_token " << c.stop_token);
    SequenceOutcome o;
    o.finish = FinishReason::kStopString;  // Stale: must be overwritten.
    RecordSampledToken(c.token, IsStopToken(c.token, c.stop_token), o);
    CHECK(o.produced_token);
    CHECK(o.token == c.token);
    CHECK(o.finish == c.finish);
    CHECK(o.error.empty());
  }
}

TEST_CASE("StartStepOutcome answers the plan and forgets the last step",
          "[exec]") {
  PlanBuilder b(/*step=*/9);
  b.Add(RequestId(1), 0, {1, 2}, Blocks({0}), true, true);
  StepOutcome outcome;
  outcome.step = 3;
  outcome.completed_at = absl::UnixEpoch();
  outcome.sequences.resize(4);
  outcome.failed_loads.push_back({ModelId(0), "old"});
  StartStepOutcome(b.plan(), &outcome);
  CHECK(outcome.step == 9);
  CHECK(outcome.completed_at == absl::InfinitePast());
  CHECK(outcome.sequences.empty());
  CHECK(outcome.sequences.capacity() >= 4);
  CHECK(outcome.failed_loads.empty());
}

TEST_CASE("FailWholeStep fails every planned sequence in plan order",
          "[exec]") {
  PlanBuilder b(/*step=*/4);
  b.Add(RequestId(3), 0, {1}, Blocks({0}), true, true);
  b.Add(RequestId(1), 0, {1, 2}, Blocks({1}), true, false);
  StepOutcome outcome;
  outcome.sequences.resize(1);
  outcome.sequences[0].produced_token = true;
  outcome.completed_at = absl::UnixEpoch();
  outcome.failed_loads.push_back({ModelId(0), "disk"});
  FailWholeStep(b.plan(), absl::InternalError("device lost"), &outcome);
  CHECK(outcome.step == 4);
  CHECK(outcome.completed_at == absl::InfinitePast());
  REQUIRE(outcome.sequences.size() == 2);
  CHECK(outcome.sequences[0].id == RequestId(3));
  CHECK(outcome.sequences[1].id == RequestId(1));
  for (const SequenceOutcome& o : outcome.sequences) {
    CHECK(o.error == "step failed: device lost");
    CHECK_FALSE(o.produced_token);
    CHECK(o.finish == FinishReason::kNone);
  }
  CHECK(outcome.failed_loads.size() == 1);
}

// An executor that answers with a fixed status after writing junk.
class ScriptedExecutor : public StepExecutor {
 public:
  explicit ScriptedExecutor(absl::Status result) : result_(std::move(result)) {}
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override {
    saw_failed_loads_ = outcome->failed_loads.size();
    outcome->step = plan.step + 100;
    for (const ScheduledSequence& s : plan.sequences) {
      SequenceOutcome& o = outcome->sequences.emplace_back();
      o.id = s.id;
      if (s.sample) RecordSampledToken(1, false, o);
    }
    return result_;
  }
  size_t saw_failed_loads_ = 0;

 private:
  absl::Status result_;
};

TEST_CASE("ExecuteStep is the one failure path of a host loop", "[exec]") {
  PlanBuilder b(/*step=*/2);
  b.Add(RequestId(5), 0, {1}, Blocks({0}), true, true);
  StepOutcome outcome;
  outcome.failed_loads.push_back({ModelId(0), "from an earlier step"});

  SECTION("a successful step keeps the executor's outcome") {
    ScriptedExecutor ok(absl::OkStatus());
    CHECK(ExecuteStep(ok, b.plan(), &outcome).ok());
    CHECK(ok.saw_failed_loads_ == 0);
    CHECK(outcome.step == 2);
    REQUIRE(outcome.sequences.size() == 1);
    CHECK(outcome.sequences[0].produced_token);
    CHECK(outcome.sequences[0].error.empty());
  }
  SECTION("a failed step fails every sequence and returns the error") {
    ScriptedExecutor broken(absl::UnavailableError("no device"));
    absl::Status s = ExecuteStep(broken, b.plan(), &outcome);
    CHECK(absl::IsUnavailable(s));
    CHECK(outcome.step == 2);
    REQUIRE(outcome.sequences.size() == 1);
    CHECK(outcome.sequences[0].id == RequestId(5));
    CHECK(outcome.sequences[0].error == "step failed: no device");
    CHECK_FALSE(outcome.sequences[0].produced_token);
  }
}

}  // namespace
}  // namespace hearth

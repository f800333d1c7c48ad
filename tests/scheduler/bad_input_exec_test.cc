// Catalogue surface: the engine-side helpers every executor shares
// (ValidateExecutorKvConfig, ValidateStopToken) and the iteration helpers
// (ExecuteStep, EngineLoop) driven wrongly or by a failing engine.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/exec/engine_loop.h"
#include "hearth/exec/executor_kv_config.h"
#include "hearth/exec/step_executor.h"
#include "hearth/exec/step_outcome_fill.h"
#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {
namespace {

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

BadInputRow KvConfigRow(std::string name, std::function<void(ExecutorKvConfig&)> apply,
                        std::string message_has) {
  auto run = [apply = std::move(apply)] {
    ExecutorKvConfig kv;
    apply(kv);
    return ValidateExecutorKvConfig(kv);
  };
  return {"exec: kv config with " + name, std::move(run), kInvalid, std::move(message_has)};
}

std::vector<BadInputRow> KvConfigRows() {
  using K = ExecutorKvConfig&;
  return {
      KvConfigRow("block_size 0", [](K k) { k.block_size = 0; }, "kv.block_size = 0"),
      KvConfigRow("block_size -1", [](K k) { k.block_size = -1; }, "kv.block_size = -1"),
      KvConfigRow("block_size 4097", [](K k) { k.block_size = 4097; }, "must be in [1, 4096]"),
      KvConfigRow("num_device_blocks 0", [](K k) { k.num_device_blocks = 0; },
                  "kv.num_device_blocks = 0 is invalid: must be in [1, 2^30]"),
      KvConfigRow("num_device_blocks 2^30 + 1", [](K k) { k.num_device_blocks = (1 << 30) + 1; },
                  "kv.num_device_blocks"),
      KvConfigRow("num_host_blocks -1", [](K k) { k.num_host_blocks = -1; },
                  "kv.num_host_blocks = -1"),
      KvConfigRow("num_host_blocks INT32_MAX", [](K k) { k.num_host_blocks = kInt32Max; },
                  "must be in [0, 2^30]"),
      KvConfigRow("max_positions 0", [](K k) { k.max_positions = 0; }, "kv.max_positions = 0"),
      KvConfigRow("max_positions 2^24 + 1", [](K k) { k.max_positions = (1 << 24) + 1; },
                  "must be in [1, 2^24]"),
      KvConfigRow("max_positions INT32_MIN", [](K k) { k.max_positions = kInt32Min; },
                  "kv.max_positions"),
  };
}

BadInputRow StopTokenRow(std::string name, TokenId stop_token, int32_t vocab_size,
                         std::string message_has) {
  return {"exec: stop token " + name,
          [=] { return ValidateStopToken(stop_token, vocab_size); }, kInvalid,
          std::move(message_has)};
}

std::vector<BadInputRow> StopTokenRows() {
  return {
      StopTokenRow("equal to vocab_size", 256, 256, "stop_token = 256 is invalid"),
      StopTokenRow("INT32_MAX", kInt32Max, 256, "in [0, 256)"),
      StopTokenRow("0 with an empty vocabulary", 0, 0, "in [0, 0)"),
      StopTokenRow("5 with a negative vocabulary", 5, -3, "stop_token = 5"),
  };
}

// An engine that fails the whole step, or reports a malformed outcome.
class HostileExecutor : public StepExecutor {
 public:
  enum class Kind { kFailsStep, kDropsSequences };
  explicit HostileExecutor(Kind kind) : kind_(kind) {}
  // The last plan it ran.
  const StepPlan* seen = nullptr;
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override {
    seen = &plan;
    StartStepOutcome(plan, outcome);
    if (kind_ == Kind::kFailsStep) return absl::UnavailableError("the device fell over");
    return absl::OkStatus();  // No entry for any planned sequence.
  }

 private:
  Kind kind_;
};

std::vector<BadInputRow> IterationRows() {
  using L = LiveScheduler&;
  HostileExecutor::Kind fails = HostileExecutor::Kind::kFailsStep;
  HostileExecutor::Kind drops = HostileExecutor::Kind::kDropsSequences;
  return {
      LiveRow(
          "exec: EngineLoop while a plan is outstanding", nullptr,
          [](L live) {
            live.Submit();
            live.Plan();
            HostileExecutor executor(HostileExecutor::Kind::kDropsSequences);
            EngineLoop loop(live.scheduler(), executor);
            return loop.Step(live.now + absl::Seconds(1));
          },
          absl::StatusCode::kFailedPrecondition, "still outstanding"),
      LiveRow(
          "exec: EngineLoop with time going backwards", nullptr,
          [](L live) {
            live.Step();
            HostileExecutor executor(HostileExecutor::Kind::kDropsSequences);
            EngineLoop loop(live.scheduler(), executor);
            return loop.Step(live.now - absl::Seconds(1));
          },
          kInvalid, "time must not go backwards"),
      // The executor's error comes back, and the request it failed is not
      // lost: the outcome ExecuteStep filled in is accepted.
      LiveRow(
          "exec: ExecuteStep with an engine that fails the step", nullptr,
          [=](L live) {
            live.Submit();
            const StepPlan& plan = live.Plan();
            HostileExecutor executor(fails);
            StepOutcome outcome;
            const absl::Status failed = ExecuteStep(executor, plan, &outcome);
            REQUIRE(outcome.sequences.size() == plan.sequences.size());
            REQUIRE(live->Complete(outcome).ok());
            return failed;
          },
          absl::StatusCode::kUnavailable, "the device fell over"),
      // Complete refuses the outcome, so the loop completes the step as
      // failed (EngineLoop's policy (c)): no plan is left outstanding.
      LiveRow(
          "exec: EngineLoop with an engine that drops its sequences", nullptr,
          [=](L live) {
            live.Submit();
            HostileExecutor executor(drops);
            EngineLoop loop(live.scheduler(), executor);
            live.now += absl::Seconds(1);
            const absl::Status answer = loop.Step(live.now);
            REQUIRE(executor.seen != nullptr);
            REQUIRE_FALSE(live->plan_outstanding());
            return answer;
          },
          kInvalid, "report exactly one per planned sequence"),
  };
}

}  // namespace

std::vector<BadInputRow> ExecRows() {
  std::vector<BadInputRow> rows;
  for (auto part : {KvConfigRows, StopTokenRows, IterationRows}) {
    for (BadInputRow& row : part()) rows.push_back(std::move(row));
  }
  return rows;
}

TEST_CASE("Bad input: executor helpers refuse invalid geometry, stop tokens and call order",
          "[scheduler][bad_input]") {
  RunRows(ExecRows());
}

}  // namespace hearth::catalogue

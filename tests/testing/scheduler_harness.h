// File: tests/testing/scheduler_harness.h
//
// A scheduler plus a fake engine, with every invariant checked after every
// call: the scheduler's own audit (CheckInvariants), the external plan checks
// (PlanChecker), and exactly-once terminal results.

#ifndef HEARTH_TESTS_TESTING_SCHEDULER_HARNESS_H_
#define HEARTH_TESTS_TESTING_SCHEDULER_HARNESS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/fake_executor.h"
#include "tests/testing/plan_checker.h"

namespace hearth::testing {

// A deep copy of a StepPlan that outlives Complete().
struct PlanCopy {
  struct Sequence {
    RequestId id;
    int32_t start_position = 0;
    int32_t num_tokens = 0;
    bool sample = false;
    bool full_block_table = false;
    std::vector<BlockId> block_table;
    std::vector<TokenId> token_ids;
    int32_t draft_tokens = 0;
    bool input_pending = false;
    bool embed = false, mean_pool = false, pool = false;
    ModelId model;
  };
  uint64_t step = 0;
  std::vector<Sequence> sequences;
  std::vector<Preemption> preempted;
  std::vector<RequestId> released;
  std::vector<BlockCopy> swap_out, swap_in, copy_on_write;
  int32_t num_batched_tokens = 0;
  std::vector<EncoderInput> encoder_inputs;
  std::vector<int32_t> encoder_frees;
  int32_t num_encoder_tokens = 0;
  int32_t model_commands_loads = 0;
  // Unload commands per model id (first 8 models).
  int32_t unloads_of[8] = {};
  std::vector<ModelCommand> model_commands;

  static PlanCopy Of(const StepPlan& plan);
  // The model commands as "load 1", "unload 0", ... in plan order.
  std::vector<std::string> CommandNames() const;
  const Sequence* Find(RequestId id) const {
    for (const Sequence& s : sequences) if (s.id == id) return &s;
    return nullptr;
  }
};

class SchedulerHarness {
 public:
  static absl::StatusOr<std::unique_ptr<SchedulerHarness>> Create(
      SchedulerOptions options, uint64_t seed = 1);

  Scheduler& scheduler() { return *scheduler_; }
  FakeExecutor& executor() { return executor_; }
  absl::Time now() const { return now_; }
  void Advance(absl::Duration d) { now_ += d; }

  // Submits and records the id as live when accepted.
  absl::StatusOr<RequestId> Submit(const RequestSpec& spec);
  // Plan, check, execute, complete, check. With overlap_planning: plan
  // step N+1, check, complete step N, check, execute step N+1 (which stays
  // in flight until the next Step or FinishInFlight).
  absl::Status Step();
  // Completes the step in flight, if any (overlapped planning).
  absl::Status FinishInFlight();
  // Plan entries voided while outstanding, over all completed steps.
  int64_t voided_entries() const { return voided_entries_; }

  // SchedulerHarness::Run()
  //
  // The engine loop of the tests: Step() at most `max_steps` times, before
  // each step ending the run when nothing is live (`until_idle`), after each
  // step calling `after_step` (a per-step check; its error ends the run
  // with it) and then `stop` (true ends the run). RunUntilIdle(),
  // StepUntilDecoding() and the random workloads' drains are this loop.
  // Returns why the run ended, or the first error of a step or a hook.
  struct RunOptions {
    int max_steps = 100000;
    bool until_idle = true;
    std::function<absl::Status()> after_step;
    std::function<absl::StatusOr<bool>()> stop;
  };
  enum class RunEnd { kIdle, kStopped, kOutOfSteps };
  absl::StatusOr<RunEnd> Run(const RunOptions& options);
  // Steps until nothing is live or `max_steps` pass.
  absl::Status RunUntilIdle(int max_steps = 100000);
  // Steps until `id` has computed past its prompt (it decodes and holds its
  // blocks); an error if it ends first or `max_steps` pass.
  absl::Status StepUntilDecoding(RequestId id, int max_steps = 100000);

  // Terminal results seen so far, by id. Exactly-once is checked on arrival.
  const absl::flat_hash_map<RequestId, RequestResult>& results() const { return results_; }
  const absl::flat_hash_set<RequestId>& live() const { return live_; }
  // Copies of what the last plan contained.
  const PlanCopy& last_plan() const { return last_plan_; }
  const std::vector<PlanCopy>& history() const { return history_; }
  void keep_history(bool keep) { keep_history_ = keep; }
  absl::Status CollectResults();

 private:
  SchedulerHarness(std::unique_ptr<Scheduler> s, uint64_t seed);

  std::unique_ptr<Scheduler> scheduler_;
  FakeExecutor executor_;
  PlanChecker checker_;
  absl::Time now_ = absl::UnixEpoch();
  absl::flat_hash_set<RequestId> live_;
  // RequestSpec::handle of each live request, checked against every plan
  // entry and result that names it.
  absl::flat_hash_map<RequestId, uint64_t> handles_;
  absl::Status CheckHandles(const StepPlan& plan) const;
  absl::Status CheckHandle(RequestId id, uint64_t handle, std::string_view where) const;
  absl::flat_hash_map<RequestId, RequestResult> results_;
  PlanCopy last_plan_;
  std::vector<PlanCopy> history_;
  bool keep_history_ = false;

  // Overlapped planning: the step in flight and its outcome, and what the
  // plan checker needs to know which skipped decodes are excused.
  absl::Status StepOverlapped();
  // Plan, then the plan checks (`excused` as PlanChecker::CheckPlan), the
  // handles and the invariants; records the plan's copy.
  absl::StatusOr<const StepPlan*> PlanChecked(const absl::flat_hash_set<RequestId>& excused);
  absl::Status CompleteInFlight();
  absl::flat_hash_set<RequestId> ExcusedSkips() const;
  const StepPlan* in_flight_ = nullptr;
  int64_t voided_entries_ = 0;
  StepOutcome in_flight_outcome_;
  struct Limits {
    int32_t max_new_tokens = 0;
    // Output tokens that reach the model's context.
    int32_t context_room = 0;
  };
  absl::flat_hash_map<RequestId, Limits> limits_;
  // Output tokens applied so far (voided entries excluded).
  absl::flat_hash_map<RequestId, int32_t> produced_;
  // Requests preempted or released by the step in flight.
  absl::flat_hash_set<RequestId> dropped_in_flight_;
};

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_TESTING_SCHEDULER_HARNESS_H_

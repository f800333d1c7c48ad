// File: hearth/sim/simulated_executor.h
//
// `SimulatedExecutor` is a StepExecutor without a model: it prices each plan
// with a StepCostModel and produces tokens, ending each request with a stop
// token when it reaches its hidden true output length. The scheduler never
// sees that length (only max_new_tokens), exactly as with a real engine.
//
// Execute() sets StepOutcome::completed_at = plan.now + step time, so the
// scheduler and metrics stamp tokens at the step's end; last_step_time()
// tells the simulator how far to advance its clock.
//
// Thread-safety: none (engine thread).
//
// Example:
//   hearth::ModelSpec model = *hearth::FindModelSpec("Llama-3.1-8B");
//   hearth::SimulatedExecutor exec(&cost_model, /*block_size=*/16,
//                                  model.KvBytesPerToken());
//   hearth::RequestSpec spec;
//   spec.prompt_tokens = 300;
//   spec.max_new_tokens = 256;
//   absl::StatusOr<hearth::RequestId> id = scheduler.Submit(spec);
//   if (!id.ok()) return id.status();
//   absl::Status known = exec.SetOutputLength(*id, 212);   // its hidden length
//   hearth::EngineLoop loop(scheduler, exec);
//   absl::Status step = loop.Step(now);
//   now += exec.last_step_time();

#ifndef HEARTH_SIM_SIMULATED_EXECUTOR_H_
#define HEARTH_SIM_SIMULATED_EXECUTOR_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/exec/step_executor.h"
#include "hearth/sim/cost_model.h"

namespace hearth {

class SimulatedExecutor : public StepExecutor {
 public:
  // `cost` is not owned and must outlive the executor. `block_size` and
  // `kv_bytes_per_token` price block copies.
  SimulatedExecutor(const StepCostModel* cost, int32_t block_size,
                    int64_t kv_bytes_per_token);

  // Registers the hidden output length (>= 1) of a request before it runs.
  // InvalidArgument for a length < 1.
  absl::Status SetOutputLength(RequestId id, int32_t length);
  // Drops what the executor knows of `id` (also done for plan.released).
  void Forget(RequestId id);

  // A sequence of an unregistered request is failed (its error names it);
  // the step itself always succeeds.
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override;

  absl::Duration last_step_time() const { return last_step_time_; }
  // Requests currently tracked.
  size_t tracked() const { return requests_.size(); }

 private:
  struct Hidden {
    int32_t length = 0;
    int32_t produced = 0;
  };
  const StepCostModel* cost_;
  int64_t block_bytes_;
  absl::flat_hash_map<RequestId, Hidden> requests_;
  std::vector<SequenceWork> work_;
  absl::Duration last_step_time_ = absl::ZeroDuration();
};

}  // namespace hearth

#endif  // HEARTH_SIM_SIMULATED_EXECUTOR_H_

#include "hearth/sim/simulated_executor.h"

#include "absl/strings/str_cat.h"
#include "hearth/exec/step_outcome_fill.h"

namespace hearth {

SimulatedExecutor::SimulatedExecutor(const StepCostModel* cost,
                                     int32_t block_size,
                                     int64_t kv_bytes_per_token)
    : cost_(cost), block_bytes_(int64_t{block_size} * kv_bytes_per_token) {}

absl::Status SimulatedExecutor::SetOutputLength(RequestId id, int32_t length) {
  if (length < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hidden output length of request ", id.value(), " must be >= 1; got ",
        length));
  }
  requests_[id] = Hidden{length, 0};
  return absl::OkStatus();
}

void SimulatedExecutor::Forget(RequestId id) { requests_.erase(id); }

absl::Status SimulatedExecutor::Execute(const StepPlan& plan,
                                        StepOutcome* outcome) {
  for (const ReleasedSequence& r : plan.released) requests_.erase(r.id);
  StartStepOutcome(plan, outcome);
  outcome->sequences.reserve(plan.sequences.size());
  work_.clear();
  for (const ScheduledSequence& s : plan.sequences) {
    SequenceOutcome& o = outcome->sequences.emplace_back();
    o.id = s.id;
    auto it = requests_.find(s.id);
    if (it == requests_.end()) {
      o.error = absl::StrCat("simulator: no hidden output length for request ",
                             s.id.value());
      continue;
    }
    Hidden& h = it->second;
    work_.push_back({s.start_position, s.num_tokens, s.decode});
    if (!s.sample) continue;
    ++h.produced;
    RecordSampledToken(/*token=*/0, /*ends_request=*/h.produced >= h.length, o);
  }
  StepWork work;
  work.sequences = work_;
  work.host_copy_bytes =
      static_cast<int64_t>(plan.swap_out.size() + plan.swap_in.size()) *
      block_bytes_;
  work.device_copy_bytes =
      static_cast<int64_t>(plan.copy_on_write.size()) * block_bytes_;
  work.encoder_tokens = plan.num_encoder_tokens;
  last_step_time_ = cost_->StepTime(work);
  outcome->completed_at = plan.now + last_step_time_;
  return absl::OkStatus();
}

}  // namespace hearth

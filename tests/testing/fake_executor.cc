#include "tests/testing/fake_executor.h"

namespace hearth::testing {

absl::Status FakeExecutor::Execute(const StepPlan& plan, StepOutcome* outcome) {
  outcome->step = plan.step;
  outcome->sequences.clear();
  for (const ReleasedSequence& r : plan.released) produced_.erase(r.id);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  outcome->failed_loads.clear();
  for (const ModelCommand& c : plan.model_commands) {
    if (c.kind == ModelCommandKind::kLoad && load_failure_rate_ > 0 && u(rng_) < load_failure_rate_) {
      outcome->failed_loads.push_back({c.model, "injected load failure"});
    }
  }
  for (const ScheduledSequence& s : plan.sequences) {
    SequenceOutcome& o = outcome->sequences.emplace_back();
    o.id = s.id;
    if (failure_rate_ > 0 && u(rng_) < failure_rate_) {
      o.error = "injected failure";
      continue;
    }
    if (out_of_kv_rate_ > 0 && u(rng_) < out_of_kv_rate_) {
      o.out_of_kv = true;
      continue;
    }
    if (!s.sample) continue;
    o.produced_token = true;
    o.token = TokenFor(s.id, s.start_position + s.num_tokens, vocab_);
    const int32_t n = ++produced_[s.id];
    auto it = stop_after_.find(s.id);
    if (it != stop_after_.end() && n >= it->second) o.finish = FinishReason::kStopToken;
  }
  return absl::OkStatus();
}

}  // namespace hearth::testing

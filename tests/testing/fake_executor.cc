#include "tests/testing/fake_executor.h"

#include <algorithm>

namespace hearth::testing {

absl::Status FakeExecutor::Execute(const StepPlan& plan, StepOutcome* outcome) {
  outcome->step = plan.step;
  outcome->sequences.clear();
  outcome->draft_ids.clear();
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
    // Drafts "the model" agrees with: a random number of them, each the
    // token it would have sampled there, so the output is the same.
    int32_t accepted = 0;
    if (s.draft_tokens > 0) {
      accepted = std::uniform_int_distribution<int32_t>(0, s.draft_tokens)(draft_rng_);
    }
    const int32_t before = produced_[s.id];
    auto it = stop_after_.find(s.id);
    if (it != stop_after_.end() && before + accepted + 1 >= it->second) {
      // The stop token is the last one reported.
      accepted = std::max(0, it->second - before - 1);
      o.finish = FinishReason::kStopToken;
    }
    for (int32_t d = 0; d < accepted; ++d) {
      outcome->draft_ids.push_back(TokenFor(s.id, s.start_position + 1 + d, vocab_));
    }
    o.accepted_drafts = accepted;
    o.token = TokenFor(s.id, s.start_position + s.num_tokens + accepted, vocab_);
    produced_[s.id] = before + accepted + 1;
  }
  return absl::OkStatus();
}

void FakeExecutor::Discard(const StepPlan& plan, const StepOutcome& outcome) {
  for (const SequenceOutcome& o : outcome.sequences) {
    if (!o.produced_token ||
        !IsVoided(plan, o.id)) {
      continue;
    }
    auto it = produced_.find(o.id);
    if (it != produced_.end()) it->second -= 1 + o.accepted_drafts;
  }
}

}  // namespace hearth::testing

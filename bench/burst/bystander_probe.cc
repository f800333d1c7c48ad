#include "bench/burst/bystander_probe.h"

#include <string>

namespace hearth::bench {

void BystanderProbe::Submit(Scheduler& scheduler, uint64_t steps_done) {
  RequestSpec spec;
  spec.user = user_;
  // A short chat turn: sizes fixed so every probe asks the same.
  spec.prompt_tokens = 128;
  spec.max_new_tokens = 16;
  BystanderRequest& r = requests_.emplace_back();
  r.submitted_after_step = steps_done;
  absl::StatusOr<RequestId> id = scheduler.Submit(spec);
  if (!id.ok()) {
    r.error = std::string(absl::StatusCodeToString(id.status().code()));
    return;
  }
  r.accepted = true;
  waiting_.emplace(*id, requests_.size() - 1);
}

void BystanderProbe::Observe(const StepPlan& plan) {
  if (waiting_.empty()) return;
  for (const ScheduledSequence& s : plan.sequences) {
    auto it = waiting_.find(s.id);
    if (it == waiting_.end()) continue;
    requests_[it->second].first_planned_step = plan.step;
    waiting_.erase(it);
  }
}

}  // namespace hearth::bench

// ServeEngine::PublishSnapshot(): the engine thread's periodic picture of
// the house for /metrics, the status endpoint and the dashboard.

#include <algorithm>

#include "hearth/metrics/engine_gauges.h"
#include "serve_engine.h"

namespace hearth::serve {
namespace {

bool IsWaiting(RequestPhase phase) {
  return phase == RequestPhase::kQueued || phase == RequestPhase::kWaiting ||
         phase == RequestPhase::kPreparing || phase == RequestPhase::kSwapped;
}

}  // namespace

void ServeEngine::PublishSnapshot(absl::Time now) {
  next_snapshot_ = now + options_.snapshot_interval;
  auto s = std::make_shared<EngineSnapshot>();
  const SchedulerOptions& o = scheduler_->options();
  s->taken = now;
  s->model = options_.model_name;
  s->policy = options_.policy_name;
  s->block_size = o.kv.block_size;
  s->context_length = context_length_;
  s->report = collector_->Report();
  s->gauges = EngineGaugesFrom(*scheduler_);
  {
    // Read after the report: a cancellation the report shows was handed to
    // the scheduler inside Cancel's critical section, so taking mu_ here
    // waits for that section's count.
    absl::MutexLock lock(&mu_);
    s->draining = intake_closed_;
    s->disconnect_cancels = disconnect_cancels_.load();
  }
  s->swapped_out = executor_->stats().swapped_out;
  s->swapped_in = executor_->stats().swapped_in;
  s->kv_streams = kv_streams_;
  for (size_t c = 0; c < o.work_classes.size(); ++c) {
    ClassLive& cl = s->classes.emplace_back();
    cl.name = o.work_classes[c].name;
    cl.priority = o.work_classes[c].priority;
    cl.max_running = o.work_classes[c].max_running;
    cl.slo = options_.slos[c];
  }
  for (const UserConfig& u : o.users) s->members.push_back({u.name, u.weight});
  std::vector<std::pair<absl::Time, RunningSequence>> running;
  for (const auto& [id, live] : live_) {
    absl::StatusOr<RequestView> view = scheduler_->GetRequest(id);
    const RequestPhase phase = view.ok() ? view->phase : RequestPhase::kQueued;
    ClassLive& cl = s->classes[live.work_class.value()];
    MemberLive& member = s->members[live.user.value()];
    if (IsWaiting(phase)) {
      ++cl.waiting;
      ++member.waiting;
      cl.oldest_wait_s = std::max(cl.oldest_wait_s, absl::ToDoubleSeconds(now - live.submitted));
      continue;
    }
    if (phase != RequestPhase::kRunning) continue;
    ++cl.running;
    ++member.running;
    member.kv_blocks += view->device_blocks;
    running.push_back({live.submitted,
                       {id.value(), member.name, cl.name, view->prompt_tokens,
                        view->output_tokens, view->device_blocks}});
  }
  std::sort(running.begin(), running.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < running.size() && i < kMaxListedSequences; ++i) {
    s->running.push_back(running[i].second);
  }
  absl::MutexLock lock(&snapshot_mu_);
  snapshot_ = std::move(s);
}

}  // namespace hearth::serve

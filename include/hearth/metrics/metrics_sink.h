// File: hearth/metrics/metrics_sink.h
//
// `MetricsSink` observes the scheduler through immutable events. The scheduler
// calls it on the engine thread, inside Plan() and Complete(); a sink must not
// call back into the scheduler and should return quickly (copy what it needs,
// aggregate, or hand off to another thread).
//
// Per-token information is not sent as one event per token: OnStep delivers
// the plan and the outcome of each completed step, from which a sink derives
// tokens, inter-token gaps and batch composition at one virtual call per step.
//
// Example:
//   class CountingSink : public hearth::MetricsSink {
//    public:
//     void OnRequestEvent(const hearth::RequestEvent& e) override { ++events; }
//     void OnStep(const hearth::StepPlan&, const hearth::StepOutcome&) override {}
//     int events = 0;
//   };
//   CountingSink sink;
//   options.metrics_sink = &sink;   // not owned; must outlive the scheduler

#ifndef HEARTH_METRICS_METRICS_SINK_H_
#define HEARTH_METRICS_METRICS_SINK_H_

#include <cstdint>

#include "absl/time/time.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_state.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth {

enum class RequestEventKind : uint8_t {
  // Seen by the scheduler (first Plan after Submit); time is the arrival time
  // stamped at Submit.
  kArrive,
  kAdmit,
  kFirstToken,
  kPreempt,
  // An engine-reported failure is being retried (the request waits again,
  // progress reset); `output_tokens` is what it had produced.
  kRetry,
  // Terminal: `phase` and `finish_reason` say how it ended.
  kEnd,
};

struct RequestEvent {
  RequestEventKind kind = RequestEventKind::kArrive;
  absl::Time time = absl::InfinitePast();
  RequestId id;
  // RequestSpec::handle of the request.
  uint64_t handle = 0;
  UserId user;
  WorkClassId work_class;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  // The request's effective SLO targets (RequestView::ttft_slo, tpot_slo),
  // the same on every event of one request; InfiniteDuration: none.
  absl::Duration ttft_slo = absl::InfiniteDuration();
  absl::Duration tpot_slo = absl::InfiniteDuration();
  // kAdmit: prompt tokens found in the prefix cache.
  int32_t cached_tokens = 0;
  // kPreempt: how, and why (kScheduler or kEngineOutOfKv; a retry is a
  // kRetry event instead).
  PreemptionMode preemption_mode = PreemptionMode::kRecompute;
  PreemptionCause preemption_cause = PreemptionCause::kScheduler;
  // kEnd only.
  RequestPhase phase = RequestPhase::kFinished;
  FinishReason finish_reason = FinishReason::kNone;
};

class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  virtual void OnRequestEvent(const RequestEvent& event) = 0;
  // Called at the end of every successful Complete() with the plan it answers.
  virtual void OnStep(const StepPlan& plan, const StepOutcome& outcome) = 0;
};

}  // namespace hearth

#endif  // HEARTH_METRICS_METRICS_SINK_H_

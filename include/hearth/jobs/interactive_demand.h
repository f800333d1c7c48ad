// File: hearth/jobs/interactive_demand.h
//
// How busy the accelerator's interactive work is, as the host tells the job
// queues, and the give-back rule that turns it into fewer background cores.
// The jobs room never reads the scheduler: the host fills an
// `InteractiveDemand` each engine iteration (or every few) from what it
// already has -- SchedulerStats, MetricsCollector's SLO figures -- and hands
// it to JobPool::SetInteractiveDemand.
//
// The give-back rule (GiveBackOptions, all pure functions below):
//   backlog_pressure = interactive_backlog / backlog_for_full_pressure
//   slack_pressure   = (slack_comfortable - slo_slack)
//                      / (slack_comfortable - slack_exhausted)
//   pressure         = clamp(max(backlog_pressure, slack_pressure), 0, 1)
// A background queue may then start jobs up to
//   floor(max_concurrency - pressure * (max_concurrency - concurrency_under_demand))
// so it uses every slot it is allowed while the accelerator is calm, gives
// slots back as soon as pressure rises, and holds concurrency_under_demand
// at full pressure (0 there pauses it: library scans at the household's
// peak). Interactive queues are never reduced. Give-back only stops new
// starts: a running job is never interrupted to give its core back, so a
// queue can be above its lowered limit until its jobs finish. Demand older
// than demand_expiry counts as none, so a host that stops reporting (its
// engine loop died) does not leave background work paused for ever.
//
// Thread-safety: value types and pure functions.
//
// Example (the engine thread, each iteration):
//   hearth::InteractiveDemand demand;
//   demand.interactive_backlog = stats.queued + stats.waiting;  // voice+chat
//   demand.slo_slack = 1.0 - voice_p90_ttft / voice_ttft_target;
//   (void)jobs->SetInteractiveDemand(demand);

#ifndef HEARTH_JOBS_INTERACTIVE_DEMAND_H_
#define HEARTH_JOBS_INTERACTIVE_DEMAND_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace hearth {

struct InteractiveDemand {
  // Interactive requests waiting for the accelerator now (queued, waiting,
  // preparing or swapped in interactive work classes). In [0, 2^30].
  int64_t interactive_backlog = 0;
  // Fraction of the tightest interactive latency target still unused:
  // (target - observed) / target, so 1 is instant, 0 is at the target and
  // negative is missing it. Finite, in [-1e6, 1].
  double slo_slack = 1.0;
};

struct GiveBackOptions {
  // Backlog at which backlog pressure reaches 1. In [1, 2^30].
  int64_t backlog_for_full_pressure = 8;
  // Slack at or above which slack pressure is 0, and at or below which it is
  // 1. Finite, slack_exhausted < slack_comfortable <= 1, slack_exhausted
  // >= -1e6.
  double slack_comfortable = 0.5;
  double slack_exhausted = 0.0;
  // Demand reported longer ago than this counts as none. > 0;
  // InfiniteDuration() keeps the last report for ever.
  absl::Duration demand_expiry = absl::Seconds(10);
};

// InvalidArgument naming the field, the value and what is allowed.
absl::Status ValidateInteractiveDemand(const InteractiveDemand& demand);
absl::Status ValidateGiveBackOptions(const GiveBackOptions& options);

// The rule above, in [0, 1]. REQUIRES: both validated.
double InteractivePressure(const InteractiveDemand& demand,
                           const GiveBackOptions& options);

// Slots a background queue may fill at `pressure` in [0, 1] (clamped).
// REQUIRES: 0 <= concurrency_under_demand <= max_concurrency.
int BackgroundConcurrency(int max_concurrency, int concurrency_under_demand,
                          double pressure);

}  // namespace hearth

#endif  // HEARTH_JOBS_INTERACTIVE_DEMAND_H_

// File: hearth/metrics/metrics_collector.h
//
// `MetricsCollector` is Hearth's built-in MetricsSink: it aggregates the
// scheduler's events per user, per work class and overall (queue wait, time to
// first token, inter-token latency, end-to-end and normalised latency, tokens
// served, preemptions, terminal outcomes, SLO attainment), tracks fairness
// (Jain's index, VTC's backlogged service gap) and samples a small time series
// for plots. Report() returns a value snapshot; PrometheusText() (see
// prometheus.h) renders one.
//
// Token times. A token exists when the step that produced it has finished:
// StepOutcome::completed_at when the engine sets it, else
// `MetricsOptions::clock` read when OnStep runs (hosts call Complete() right
// after the step, so Now() is its end; the simulator advances its ManualClock
// first), else the plan's `now` (the step's start, which under-states
// latencies by one step).
//
// Terminal events are applied after the step that carries the request's last
// token, so e2e latency ends at that token whichever order the scheduler emits
// kEnd and OnStep in.
//
// Published report. Other threads (a /metrics handler) must not call
// Report(); they read PublishedReport(), an immutable report the engine
// thread replaces at most once per `publish_interval` of token time, or when
// it calls Publish(). Steps that do not publish allocate nothing for it.
//
// Thread-safety: OnRequestEvent/OnStep come from the engine thread; every
// other method but PublishedReport() must be called from that thread too (or
// with it stopped). PublishedReport() is safe from any thread, concurrently
// with the engine; the collector must outlive those calls (the reports it
// returns need not).
//
// Example:
//   hearth::MetricsOptions mo = hearth::MetricsOptionsFor(options);
//   mo.clock = &host_clock;
//   mo.publish_interval = absl::Seconds(1);
//   auto collector = *hearth::MetricsCollector::Create(mo);
//   options.metrics_sink = collector.get();
//   // ... create the scheduler and run it; any thread, meanwhile:
//   std::shared_ptr<const hearth::MetricsReport> live =
//       collector->PublishedReport();
//   // ... the run is over, on the engine thread:
//   collector->Flush();
//   collector->Publish();
//   hearth::MetricsReport report = collector->Report();

#ifndef HEARTH_METRICS_METRICS_COLLECTOR_H_
#define HEARTH_METRICS_METRICS_COLLECTOR_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/common/clock.h"
#include "hearth/metrics/fairness.h"
#include "hearth/metrics/metrics_report.h"
#include "hearth/metrics/metrics_sink.h"
#include "hearth/metrics/sample_series.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth {

// Targets a finished request must meet to count as within its class's SLO.
// InfiniteDuration() disables a target.
struct SloTarget {
  absl::Duration ttft = absl::InfiniteDuration();
  // Mean inter-token gap of the request (time per output token after the
  // first), as DistServe and vLLM's benchmarks define TPOT.
  absl::Duration tpot = absl::InfiniteDuration();
  absl::Duration e2e = absl::InfiniteDuration();
};

struct MetricsOptions {
  // Users and classes, indexed by UserId / WorkClassId. Must be non-empty,
  // names unique within each list and valid (hearth/common/names.h; no user
  // named kOtherUsersName).
  std::vector<std::string> user_names = {"default"};
  // Empty, or one weight > 0 per user (service is divided by it for
  // fairness). Empty means all 1.
  std::vector<double> user_weights;
  std::vector<std::string> class_names = {"default"};
  // Empty, or one target per class. They judge GroupReport::slo_met and
  // goodput (every target at once, finished requests only). The per-target
  // counts GroupReport::ttft_slo / tpot_slo do not read them: they judge
  // each request by the targets its events carry (RequestEvent::ttft_slo,
  // the scheduler's effective targets), with the same TTFT and TPOT.
  std::vector<SloTarget> class_slos;

  // VTC's cost of one prefill and one decode token. Must be >= 0, not both 0.
  double prefill_weight = 1.0;
  double decode_weight = 2.0;

  // Source of step end times (see above). Not owned; may be null.
  const Clock* clock = nullptr;

  // Exact samples kept per latency series before reservoir sampling (a
  // uniform sample of this size is kept beyond; counts, means and maxima stay
  // exact). Bounds memory and report time on long runs, where inter-token
  // gaps number in the millions. 0 means the SampleSeries default (2^20).
  size_t max_samples_per_series = size_t{1} << 16;
  // The backlogged-gap tracker costs O(users^2) per step; it is off (the
  // report says -1) when there are more users than this, which keeps
  // simulations of many tenants fast. Must be >= 0.
  int max_gap_users = 16;
  // Time-series sampling period for series(); zero disables the series. Must
  // be >= 0.
  absl::Duration series_interval = absl::Seconds(10);
  // Token time between the periodic publications of PublishedReport(): the
  // first step publishes, then the first step ending at least this long after
  // the last periodic publication. Zero (the default) turns periodic
  // publishing off; Publish() still works. Must be finite and >= 0.
  absl::Duration publish_interval = absl::ZeroDuration();
};

// Names, weights and SLO targets taken from a scheduler's registries: each
// class is judged (class_slos) by the targets the scheduler works to
// (WorkClassConfig::ttft_slo, tpot_slo, e2e_slo), so that a target is written
// once. A host that reports against targets the scheduler should not act on
// (a TPOT the steps are not cut for, a background class judged by a minute)
// overwrites class_slos afterwards.
MetricsOptions MetricsOptionsFor(const SchedulerOptions& options);

// One sample of the time series, taken at the first step ending at or after
// each multiple of series_interval since the first arrival.
struct SeriesPoint {
  double time_s = 0;  // since the first arrival
  int32_t waiting = 0;  // arrived, not admitted (or preempted), not ended
  int32_t running = 0;
  int64_t output_tokens = 0;  // cumulative
  int64_t prefill_tokens = 0;  // cumulative
  std::vector<double> user_service;  // cumulative normalised, per user
};

class MetricsCollector : public MetricsSink {
 public:
  // InvalidArgument naming the field when `options` is inconsistent.
  static absl::StatusOr<std::unique_ptr<MetricsCollector>> Create(
      MetricsOptions options);
  ~MetricsCollector() override;

  void OnRequestEvent(const RequestEvent& event) override;
  void OnStep(const StepPlan& plan, const StepOutcome& outcome) override;

  // Applies pending terminal events (normally done at the next step). Call it
  // once the run is over, before Report().
  void Flush();

  MetricsReport Report() const;

  // MetricsCollector::Publish()
  //
  // Engine thread: makes Report(), as of now, the published report. OnStep
  // calls it when `publish_interval` says so; call it yourself when readers
  // must see the latest figures, e.g. after Flush() at the end of a run. It
  // does not move the periodic schedule. Costs one Report() (allocates); the
  // lock it takes only guards a pointer swap.
  void Publish() ABSL_LOCKS_EXCLUDED(published_mu_);

  // MetricsCollector::PublishedReport()
  //
  // Any thread: the last published report, shared and immutable (hold it as
  // long as you like; a publication replaces the pointer, never the report).
  // Never null: before the first publication it is the report of an empty run
  // (names and weights filled in, every count zero). Its cumulative counts
  // (requests by outcome, tokens, steps) never decrease from one publication
  // to the next. Waits only for a concurrent pointer swap, never for a step.
  std::shared_ptr<const MetricsReport> PublishedReport() const
      ABSL_LOCKS_EXCLUDED(published_mu_);

  const std::vector<SeriesPoint>& series() const { return series_; }
  // Raw TTFT samples of one class (ascending), for CDF plots.
  absl::Span<const double> ClassTtftSamples(WorkClassId c) const;

  const MetricsOptions& options() const { return options_; }

 private:
  struct Group;
  struct Track;
  explicit MetricsCollector(MetricsOptions options);

  Group& UserGroup(const Track& t);
  Group& ClassGroup(const Track& t);
  Track* FindOrCreate(const RequestEvent& e);
  void SetWaiting(Track& t, bool waiting);
  void ApplyServed(Track& t, const ScheduledSequence& s, int32_t produced,
                   absl::Time end);
  // The request's first output (a token, or an embedding's vector) at `end`.
  void RecordFirstOutput(Track& t, absl::Time end);
  void Finalize(Track& t);
  void MaybeSample(absl::Time end);
  void MaybePublish(absl::Time end);
  void NoteTime(absl::Time t);

  MetricsOptions options_;
  std::vector<std::unique_ptr<Group>> users_;
  std::vector<std::unique_ptr<Group>> classes_;
  std::unique_ptr<Group> total_;
  absl::flat_hash_map<RequestId, Track> tracks_;
  std::vector<RequestId> pending_end_;
  std::vector<int32_t> user_waiting_;
  std::vector<double> user_service_;  // normalised, cumulative
  std::unique_ptr<bool[]> user_backlogged_;
  std::unique_ptr<ServiceGapTracker> gap_;
  std::vector<SeriesPoint> series_;

  absl::Time first_time_ = absl::InfiniteFuture();
  absl::Time last_time_ = absl::InfinitePast();
  absl::Time next_sample_ = absl::InfiniteFuture();
  absl::Duration busy_ = absl::ZeroDuration();
  absl::Time last_step_end_ = absl::InfinitePast();
  uint64_t steps_ = 0;
  int32_t waiting_ = 0;
  int32_t running_ = 0;
  uint64_t goodput_requests_ = 0;
  int64_t goodput_tokens_ = 0;
  // When the next periodic publication is due (InfiniteFuture when off).
  absl::Time next_publish_ = absl::InfinitePast();

  // A std::mutex rather than absl::Mutex: Debian's prebuilt Abseil carries
  // no ThreadSanitizer annotations, so TSan would report false races (as
  // src/scheduler/inbox.h found); pthread mutexes it intercepts.
  mutable std::mutex published_mu_;
  std::shared_ptr<const MetricsReport> published_
      ABSL_GUARDED_BY(published_mu_);
};

}  // namespace hearth

#endif  // HEARTH_METRICS_METRICS_COLLECTOR_H_

// File: hearth/metrics/timeline_recorder.h
//
// `TimelineRecorder` is a MetricsSink that writes a Chrome trace-event JSON
// timeline (opens in ui.perfetto.dev and chrome://tracing):
//   - process "engine": one slice per step (its batch in args) and counters
//     of waiting and running requests;
//   - one process per user, one row ("lane") per concurrently live request:
//     a "queued" slice from arrival to admission (and from a preemption to
//     readmission), one slice per prefill chunk, one slice per run of
//     consecutive decode steps, an instant at each preemption and at the end.
// Decode steps are merged into runs so that the file grows with requests and
// chunks, not with tokens. Recording stops after `max_events` events (the
// file says so in its metadata) to bound memory on very long runs.
//
// Step end times come from StepOutcome::completed_at or `clock`, as in
// MetricsCollector.
//
// Thread-safety: engine thread only, like every sink.
//
// Example:
//   #include <fstream>
//   auto timeline = *hearth::TimelineRecorder::Create(
//       {.user_names = {"alice"}, .class_names = {"chat"}, .clock = &host_clock});
//   options.metrics_sink = timeline.get();
//   // ... create the scheduler and run it ...
//   std::ofstream("timeline.json") << timeline->Json();

#ifndef HEARTH_METRICS_TIMELINE_RECORDER_H_
#define HEARTH_METRICS_TIMELINE_RECORDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/common/clock.h"
#include "hearth/metrics/metrics_sink.h"

namespace hearth {

struct TimelineOptions {
  // Indexed by UserId / WorkClassId; non-empty.
  std::vector<std::string> user_names = {"default"};
  std::vector<std::string> class_names = {"default"};
  // Step end times; not owned, may be null (then steps have zero length).
  const Clock* clock = nullptr;
  // Time zero of the timeline; InfinitePast() means the first event's time.
  absl::Time origin = absl::InfinitePast();
  // Must be >= 1.
  size_t max_events = 2'000'000;
};

class TimelineRecorder : public MetricsSink {
 public:
  static absl::StatusOr<std::unique_ptr<TimelineRecorder>> Create(
      TimelineOptions options);
  ~TimelineRecorder() override;

  void OnRequestEvent(const RequestEvent& event) override;
  void OnStep(const StepPlan& plan, const StepOutcome& outcome) override;

  // Closes open slices at the last time seen and returns the whole JSON
  // document. May be called more than once; later events still record.
  std::string Json();

  size_t num_events() const { return num_events_; }
  bool truncated() const { return truncated_; }

 private:
  struct Track;
  explicit TimelineRecorder(TimelineOptions options);

  double Micros(absl::Time t);
  // `name` is one the recorder composes (ASCII, nothing to escape); `args`
  // is JSON already.
  void Slice(uint32_t pid, uint32_t tid, std::string_view name,
             absl::Time start, absl::Time end, std::string_view args);
  void Instant(uint32_t pid, uint32_t tid, std::string_view name,
               absl::Time at);
  void CloseDecodeRun(Track& t);
  void CloseWait(Track& t, absl::Time at);
  void End(RequestId id, Track& t);
  std::string Args(RequestId id, const Track& t) const;

  TimelineOptions options_;
  // options_.class_names as JSON strings, quotes included.
  std::vector<std::string> class_json_;
  absl::flat_hash_map<RequestId, Track> tracks_;
  std::vector<std::vector<bool>> lanes_;  // per user: lane in use
  std::vector<uint32_t> max_lane_;        // per user: lanes ever used
  std::vector<RequestId> pending_end_;
  std::vector<RequestId> open_runs_;
  std::string body_;
  size_t num_events_ = 0;
  bool truncated_ = false;
  uint64_t step_ = 0;
  // The previous step's end; a step ends no earlier (StepOutcome::
  // completed_at).
  absl::Time last_step_end_ = absl::InfinitePast();
  int32_t waiting_ = 0;
  int32_t running_ = 0;
  int32_t last_waiting_ = -1;
  int32_t last_running_ = -1;
  absl::Time last_time_ = absl::InfinitePast();
};

}  // namespace hearth

#endif  // HEARTH_METRICS_TIMELINE_RECORDER_H_

// File: hearth/metrics/fanout_sink.h
//
// `FanoutSink` forwards every event to several sinks in order, because a
// scheduler holds one MetricsSink and hosts often want two (aggregates and a
// timeline, say).
//
// Example:
//   auto timeline = *hearth::TimelineRecorder::Create({.clock = &host_clock});
//   hearth::FanoutSink fanout({&collector, timeline.get()});
//   options.metrics_sink = &fanout;   // both see every event

#ifndef HEARTH_METRICS_FANOUT_SINK_H_
#define HEARTH_METRICS_FANOUT_SINK_H_

#include <utility>
#include <vector>

#include "hearth/metrics/metrics_sink.h"

namespace hearth {

class FanoutSink : public MetricsSink {
 public:
  // Sinks are not owned, must outlive this one; null entries are skipped.
  explicit FanoutSink(std::vector<MetricsSink*> sinks)
      : sinks_(std::move(sinks)) {}

  void OnRequestEvent(const RequestEvent& event) override {
    for (MetricsSink* s : sinks_) {
      if (s != nullptr) s->OnRequestEvent(event);
    }
  }
  void OnStep(const StepPlan& plan, const StepOutcome& outcome) override {
    for (MetricsSink* s : sinks_) {
      if (s != nullptr) s->OnStep(plan, outcome);
    }
  }

 private:
  std::vector<MetricsSink*> sinks_;
};

}  // namespace hearth

#endif  // HEARTH_METRICS_FANOUT_SINK_H_

#include "hearth/jobs/jobs_prometheus.h"

#include <cstdint>
#include <functional>

#include "absl/strings/str_cat.h"
#include "metrics/exposition_writer.h"

namespace hearth {
namespace {

using metrics_internal::ExpositionWriter;
using metrics_internal::Label;

class JobsWriter {
 public:
  JobsWriter(const JobPoolStats& stats, std::string prefix)
      : stats_(stats),
        prefix_(metrics_internal::ValidMetricName(prefix) ? std::move(prefix) : "hearth") {}

  // One gauge or counter family with a `queue` label per queue.
  template <typename T>
  void PerQueue(absl::string_view name, absl::string_view type, absl::string_view help,
                const std::function<T(const JobQueueStats&)>& value) {
    const std::string family = Name(name);
    w_.Family(family, type, help);
    for (const JobQueueStats& q : stats_.queues) w_.Sample(family, Label("queue", q.name), value(q));
  }

  void Ended() {
    const std::string family = Name("ended_total");
    w_.Family(family, "counter", "Jobs ended, by queue and terminal state.");
    for (const JobQueueStats& q : stats_.queues) {
      for (int e = 0; e < kNumJobEnds; ++e) {
        const std::string labels = metrics_internal::JoinLabels(
            Label("queue", q.name), Label("outcome", std::string(JobEndName(static_cast<JobEnd>(e)))));
        w_.Sample(family, labels, q.ended[e]);
      }
    }
  }

  void Histogram(absl::string_view name, absl::string_view help,
                 const LatencyHistogram JobQueueStats::*member) {
    const std::string family = Name(name);
    w_.Family(family, "histogram", help);
    for (const JobQueueStats& q : stats_.queues) {
      w_.Histogram(family, Label("queue", q.name), q.*member);
    }
  }

  void PoolGauge(absl::string_view name, absl::string_view help, double value) {
    const std::string family = Name(name);
    w_.Family(family, "gauge", help);
    w_.Sample(family, "", value);
  }

  std::string Take() { return w_.Take(); }

 private:
  std::string Name(absl::string_view name) const { return absl::StrCat(prefix_, "_jobs_", name); }

  const JobPoolStats& stats_;
  const std::string prefix_;
  ExpositionWriter w_;
};

using Count = std::function<uint64_t(const JobQueueStats&)>;
using Gauge = std::function<double(const JobQueueStats&)>;

void QueueGauges(JobsWriter& w) {
  w.PerQueue<double>("queued", "gauge", "Jobs waiting to start, backing off included.",
                     Gauge([](const auto& q) { return double(q.queued); }));
  w.PerQueue<double>("backing_off", "gauge", "Jobs waiting for a retry's backoff to end.",
                     Gauge([](const auto& q) { return double(q.backing_off); }));
  w.PerQueue<double>("running", "gauge", "Attempts holding a worker slot.",
                     Gauge([](const auto& q) { return double(q.running); }));
  w.PerQueue<double>("io_in_flight", "gauge", "Attempts holding an I/O slot.",
                     Gauge([](const auto& q) { return double(q.io_in_flight); }));
  w.PerQueue<double>("oldest_wait_seconds", "gauge",
                     "Wait so far of the longest-waiting queued job, since submission.",
                     Gauge([](const auto& q) { return absl::ToDoubleSeconds(q.oldest_wait); }));
  w.PerQueue<double>("concurrency_limit", "gauge",
                     "Concurrency new starts obey now (give-back and pause applied).",
                     Gauge([](const auto& q) { return double(q.effective_concurrency); }));
  w.PerQueue<double>("max_concurrency", "gauge", "Configured concurrency limit.",
                     Gauge([](const auto& q) { return double(q.max_concurrency); }));
  w.PerQueue<double>("paused", "gauge", "1 while the queue is paused.",
                     Gauge([](const auto& q) { return q.paused ? 1.0 : 0.0; }));
}

void QueueCounters(JobsWriter& w) {
  w.PerQueue<uint64_t>("submitted_total", "counter", "Jobs accepted.",
                       Count([](const auto& q) { return q.submitted; }));
  w.PerQueue<uint64_t>("retries_total", "counter", "Attempts started after a job's first.",
                       Count([](const auto& q) { return q.retries; }));
  w.Ended();
  w.Histogram("queue_wait_seconds", "Submission to first start.", &JobQueueStats::queue_wait);
  w.Histogram("run_seconds", "Start to return of each attempt.", &JobQueueStats::run_time);
  w.Histogram("done_latency_seconds", "Submission to the end of jobs that ended done.",
              &JobQueueStats::done_latency);
}

}  // namespace

std::string JobsPrometheusText(const JobPoolStats& stats, std::string_view prefix) {
  JobsWriter w(stats, std::string(prefix));
  QueueGauges(w);
  QueueCounters(w);
  w.PoolGauge("worker_slots", "Worker slots lent to jobs.", stats.worker_slots);
  w.PoolGauge("interactive_pressure", "Give-back pressure in force, 0 to 1.",
              stats.interactive_pressure);
  w.PoolGauge("interactive_backlog", "Interactive accelerator backlog the host last reported.",
              static_cast<double>(stats.demand.interactive_backlog));
  w.PoolGauge("interactive_slo_slack", "Interactive SLO slack the host last reported.",
              stats.demand.slo_slack);
  return w.Take();
}

}  // namespace hearth

#include "hearth/jobs/jobs_prometheus.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "metrics/exposition_writer.h"

namespace hearth {
namespace {

using metrics_internal::ExpositionWriter;
using metrics_internal::Label;

// Adds what the families write of `from` into `into`.
void AddQueue(const JobQueueStats& from, JobQueueStats& into) {
  into.paused = into.paused || from.paused;
  into.queued += from.queued;
  into.backing_off += from.backing_off;
  into.oldest_wait = std::max(into.oldest_wait, from.oldest_wait);
  into.running += from.running;
  into.io_in_flight += from.io_in_flight;
  into.effective_concurrency += from.effective_concurrency;
  into.max_concurrency += from.max_concurrency;
  into.submitted += from.submitted;
  into.retries += from.retries;
  for (int e = 0; e < kNumJobEnds; ++e) into.ended[e] += from.ended[e];
  into.queue_wait.Merge(from.queue_wait);
  into.run_time.Merge(from.run_time);
  into.done_latency.Merge(from.done_latency);
}

// The queues with no two alike in their `queue` label: a pool's names are
// unique and plain, but stats a host built itself may repeat a name or
// hold bytes Label() replaces alike; those are summed into one series.
JobPoolStats UniqueQueues(const JobPoolStats& stats) {
  JobPoolStats out = stats;
  out.queues.clear();
  absl::flat_hash_map<std::string, size_t> index;
  for (const JobQueueStats& q : stats.queues) {
    const auto [at, fresh] = index.try_emplace(Label("queue", q.name), out.queues.size());
    if (fresh) {
      out.queues.push_back(q);
    } else {
      AddQueue(q, out.queues[at->second]);
    }
  }
  return out;
}

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
  const JobPoolStats unique = UniqueQueues(stats);
  JobsWriter w(unique, std::string(prefix));
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

#include "hearth/metrics/prometheus.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hearth/common/names.h"
#include "metrics/exposition_writer.h"

namespace hearth {
namespace {

using metrics_internal::ExpositionWriter;
using metrics_internal::Label;
using metrics_internal::ValidMetricName;

// One series of a partition: its label and the group it reports.
struct Series {
  std::string labels;
  const GroupReport* group;
};

// Requests split one way (by class, or by user): `names` starts each family's
// name, so the two partitions never share a family and sum() over one is the
// whole.
struct Partition {
  std::string names;
  std::vector<Series> series;
  bool histograms = true;
};

struct CounterField {
  const char* name;
  const char* help;
  uint64_t (*get)(const GroupReport&);
};

uint64_t Count(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

constexpr CounterField kCounters[] = {
    {"requests_arrived_total", "Requests seen by the scheduler.",
     [](const GroupReport& g) { return g.arrived; }},
    {"preemptions_total", "Preemptions of running requests.",
     [](const GroupReport& g) { return g.preemptions; }},
    {"retries_total", "Engine failures retried (the request starts over).",
     [](const GroupReport& g) { return g.retries; }},
    {"prefill_tokens_total", "Prompt positions computed, recomputation included.",
     [](const GroupReport& g) { return Count(g.prefill_tokens); }},
    {"decode_tokens_total", "Decode steps served.",
     [](const GroupReport& g) { return Count(g.decode_tokens); }},
    {"output_tokens_total", "Tokens generated.",
     [](const GroupReport& g) { return Count(g.output_tokens); }},
    {"slo_met_total", "Requests that finished within their class SLO.",
     [](const GroupReport& g) { return g.slo_met; }},
    {"slo_eligible_total", "Ended requests judged against the SLO (all but cancelled).",
     [](const GroupReport& g) { return g.slo_eligible; }},
    {"prefix_cache_queried_tokens_total",
     "Prompt tokens looked up in the prefix cache at first admission.",
     [](const GroupReport& g) { return g.prefix_queried_tokens; }},
    {"prefix_cache_hit_tokens_total",
     "Prompt tokens found in the prefix cache at first admission.",
     [](const GroupReport& g) { return g.prefix_hit_tokens; }},
    {"encoder_tokens_total", "Encoder span positions encoded (photos' tokens).",
     [](const GroupReport& g) { return Count(g.encoder_tokens); }},
    {"encoder_cache_hit_tokens_total",
     "Encoder span positions read from the encoder cache instead of encoded.",
     [](const GroupReport& g) { return Count(g.encoder_cache_hit_tokens); }},
};

struct Outcome {
  const char* label;
  uint64_t GroupReport::*count;
};

constexpr Outcome kOutcomes[] = {
    {"finished", &GroupReport::finished},
    {"cancelled", &GroupReport::cancelled},
    {"rejected", &GroupReport::rejected},
    {"timed_out", &GroupReport::timed_out},
    {"failed", &GroupReport::failed},
};

struct HistogramField {
  const char* name;
  const char* help;
  LatencyHistogram LatencyHistograms::*field;
};

constexpr HistogramField kHistograms[] = {
    {"queue_wait_seconds", "Arrival to first admission.",
     &LatencyHistograms::queue_wait},
    {"ttft_seconds", "Arrival to first token.", &LatencyHistograms::ttft},
    {"itl_seconds", "Gap between consecutive tokens of a request.",
     &LatencyHistograms::itl},
    {"e2e_seconds", "Arrival to last token, finished requests.",
     &LatencyHistograms::e2e},
};

// Adds what the per-user families write of `from` into `into`.
void AddWritten(const GroupReport& from, GroupReport& into) {
  into.arrived += from.arrived;
  for (const Outcome& o : kOutcomes) into.*o.count += from.*o.count;
  into.preemptions += from.preemptions;
  into.retries += from.retries;
  into.prefill_tokens += from.prefill_tokens;
  into.decode_tokens += from.decode_tokens;
  into.output_tokens += from.output_tokens;
  into.weighted_service += from.weighted_service;
  into.slo_met += from.slo_met;
  into.slo_eligible += from.slo_eligible;
  for (SloCount GroupReport::*kind : {&GroupReport::ttft_slo, &GroupReport::tpot_slo}) {
    (into.*kind).met += (from.*kind).met;
    (into.*kind).missed += (from.*kind).missed;
  }
  into.prefix_queried_tokens += from.prefix_queried_tokens;
  into.prefix_hit_tokens += from.prefix_hit_tokens;
  into.encoder_tokens += from.encoder_tokens;
  into.encoder_cache_hit_tokens += from.encoder_cache_hit_tokens;
  into.histograms.Merge(from.histograms);
}

// Builds a partition's series so that no two share their labels: groups
// whose labels come out alike are summed into one series. Names validated
// at Scheduler::Create are unique and never the overflow's name, but a
// report a host built itself may repeat a name, use the overflow's, or hold
// bytes that Label() replaces alike.
class SeriesBuilder {
 public:
  explicit SeriesBuilder(Partition* p) : p_(p) {}

  void Add(std::string labels, const GroupReport& group) {
    const auto [at, fresh] = index_.try_emplace(labels, p_->series.size());
    if (fresh) {
      p_->series.push_back({std::move(labels), &group});
      own_.push_back(nullptr);
      return;
    }
    const size_t i = at->second;
    if (own_[i] == nullptr) {
      // Copied once, then summed into.
      own_[i] = &merged_.emplace_back(*p_->series[i].group);
      p_->series[i].group = own_[i];
    }
    AddWritten(group, *own_[i]);
  }

 private:
  Partition* p_;
  absl::flat_hash_map<std::string, size_t> index_;
  // Per series, its own sum when groups were merged into it.
  std::vector<GroupReport*> own_;
  // Stable addresses: the series point into it.
  std::deque<GroupReport> merged_;
};

void WriteCounters(const Partition& p, ExpositionWriter& w) {
  for (const CounterField& c : kCounters) {
    const std::string name = absl::StrCat(p.names, c.name);
    w.Family(name, "counter", c.help);
    for (const Series& s : p.series) w.Sample(name, s.labels, c.get(*s.group));
  }
  const std::string ended = absl::StrCat(p.names, "requests_ended_total");
  w.Family(ended, "counter", "Requests that ended, by outcome.");
  for (const Series& s : p.series) {
    for (const Outcome& o : kOutcomes) {
      w.Sample(ended, metrics_internal::JoinLabels(s.labels, Label("outcome", o.label)),
               s.group->*o.count);
    }
  }
  const std::string slo = absl::StrCat(p.names, "slo_requests_total");
  w.Family(slo, "counter",
           "Ended requests judged against their own TTFT or TPOT target, by whether they met it.");
  for (const Series& s : p.series) {
    for (const auto& [kind, count] : {std::pair{"ttft", &s.group->ttft_slo},
                                      std::pair{"tpot", &s.group->tpot_slo}}) {
      for (const auto& [met, n] : {std::pair{"true", count->met}, std::pair{"false", count->missed}}) {
        w.Sample(slo,
                 metrics_internal::JoinLabels(
                     s.labels, metrics_internal::JoinLabels(Label("kind", kind), Label("met", met))),
                 n);
      }
    }
  }
  const std::string weighted = absl::StrCat(p.names, "weighted_service_total");
  w.Family(weighted, "counter", "VTC-weighted tokens served.");
  for (const Series& s : p.series) w.Sample(weighted, s.labels, s.group->weighted_service);
}

void WriteHistograms(const Partition& p, ExpositionWriter& w) {
  if (!p.histograms) return;
  for (const HistogramField& h : kHistograms) {
    const std::string name = absl::StrCat(p.names, h.name);
    w.Family(name, "histogram", h.help);
    for (const Series& s : p.series) {
      w.Histogram(name, s.labels, s.group->histograms.*h.field);
    }
  }
}

void WriteRunGauges(const std::string& p, const MetricsReport& r,
                    ExpositionWriter& w) {
  const double queried = static_cast<double>(r.total.prefix_queried_tokens);
  const struct {
    const char* name;
    const char* help;
    double value;
  } gauges[] = {
      {"prefix_cache_hit_ratio",
       "Prompt tokens found in the prefix cache over those looked up, since start.",
       queried > 0 ? r.total.prefix_hit_tokens / queried : 0.0},
      {"output_tokens_per_second", "Output throughput over the report's window.",
       r.output_tokens_per_s},
      {"goodput_requests_per_second", "Requests within SLO per second of window.",
       r.goodput_requests_per_s},
      {"jain_index", "Jain's index over users' normalised service.", r.jain_index},
      {"max_backlogged_service_gap",
       "Largest service gap between backlogged users (-1: not tracked).",
       r.max_backlogged_service_gap},
  };
  for (const auto& g : gauges) {
    const std::string name = absl::StrCat(p, "_", g.name);
    w.Family(name, "gauge", g.help);
    w.Sample(name, "", g.value);
  }
}

// One gauge family whose series are the values of one label.
void LabelledGauge(absl::string_view name, absl::string_view help,
                   absl::string_view key,
                   std::initializer_list<std::pair<const char*, int64_t>> values,
                   ExpositionWriter& w) {
  w.Family(name, "gauge", help);
  for (const auto& [value, n] : values) {
    w.Sample(name, Label(key, value), static_cast<double>(n));
  }
}

void WriteEngineGauges(const std::string& p, const EngineGauges& g,
                       ExpositionWriter& w) {
  LabelledGauge(absl::StrCat(p, "_requests"), "Live requests by phase.", "phase",
                {{"queued", g.queued},
                 {"waiting", g.waiting},
                 {"preparing", g.preparing},
                 {"held", g.held},
                 {"running", g.running},
                 {"swapped", g.swapped}},
                w);
  const int64_t device_free = int64_t{g.device_blocks_capacity} -
                              g.device_blocks_used - g.device_blocks_cached;
  LabelledGauge(absl::StrCat(p, "_kv_device_blocks"),
                "Device KV blocks by state (sums to the pool).", "state",
                {{"used", g.device_blocks_used},
                 {"cached", g.device_blocks_cached},
                 {"free", device_free}},
                w);
  const std::string usable = absl::StrCat(p, "_kv_device_blocks_usable");
  w.Family(usable, "gauge",
           "Device KV blocks that may be held at once (what resident weights leave).");
  w.Sample(usable, "", static_cast<double>(g.device_blocks_usable));
  const std::string usage = absl::StrCat(p, "_kv_usage_ratio");
  w.Family(usage, "gauge", "Used over usable device KV blocks (0-1).");
  w.Sample(usage, "", g.KvUsage());
  LabelledGauge(absl::StrCat(p, "_kv_host_blocks"), "Host (swap) KV blocks by state.",
                "state",
                {{"used", g.host_blocks_used},
                 {"free", int64_t{g.host_blocks_capacity} - g.host_blocks_used}},
                w);
  const std::string weights = absl::StrCat(p, "_resident_weight_bytes");
  w.Family(weights, "gauge", "Bytes of model weights resident on the device.");
  w.Sample(weights, "", static_cast<double>(g.resident_weight_bytes));
}

// vLLM's names and meanings, as the Gateway API Inference Extension's
// endpoint picker and llm-d read them.
void WriteRouterNames(absl::string_view model_name, const EngineGauges& g,
                      ExpositionWriter& w) {
  const std::string labels = Label("model_name", model_name);
  const struct {
    const char* name;
    const char* help;
    double value;
  } gauges[] = {
      {"vllm:num_requests_waiting",
       "Requests waiting to be processed (Hearth: queued, waiting, preparing, held, "
       "swapped).",
       static_cast<double>(int64_t{g.queued} + g.waiting + g.preparing + g.held + g.swapped)},
      {"vllm:num_requests_running", "Requests in model execution batches.",
       static_cast<double>(g.running)},
      {"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
       g.KvUsage()},
      {"vllm:gpu_cache_usage_perc",
       "GPU KV-cache usage. 1 means 100 percent usage. Older name of "
       "vllm:kv_cache_usage_perc.",
       g.KvUsage()},
  };
  for (const auto& gauge : gauges) {
    w.Family(gauge.name, "gauge", gauge.help);
    w.Sample(gauge.name, labels, gauge.value);
  }
}

}  // namespace

std::string PrometheusText(const MetricsReport& report,
                           const PrometheusOptions& options) {
  const std::string p = ValidMetricName(options.prefix) ? options.prefix : "hearth";
  Partition classes{absl::StrCat(p, "_"), {}, true};
  SeriesBuilder class_series(&classes);
  for (const GroupReport& g : report.classes) class_series.Add(Label("class", g.name), g);
  Partition users{absl::StrCat(p, "_user_"), {}, options.user_histograms};
  const size_t cap = options.max_user_series > 0
                         ? static_cast<size_t>(options.max_user_series)
                         : 0;
  GroupReport other;
  for (size_t u = cap; u < report.users.size(); ++u) AddWritten(report.users[u], other);
  SeriesBuilder user_series(&users);
  for (size_t u = 0; u < std::min(cap, report.users.size()); ++u) {
    user_series.Add(Label("user", report.users[u].name), report.users[u]);
  }
  if (cap > 0 && report.users.size() > cap) user_series.Add(Label("user", kOtherUsersName), other);

  ExpositionWriter w;
  WriteCounters(classes, w);
  WriteHistograms(classes, w);
  if (!users.series.empty()) {
    WriteCounters(users, w);
    WriteHistograms(users, w);
  }
  WriteRunGauges(p, report, w);
  if (options.gauges.has_value()) {
    WriteEngineGauges(p, *options.gauges, w);
    if (options.router_names) WriteRouterNames(options.model_name, *options.gauges, w);
  }
  return w.Take();
}

}  // namespace hearth

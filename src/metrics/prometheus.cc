#include "hearth/metrics/prometheus.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace hearth {
namespace {

bool ValidName(absl::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string Escape(absl::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string Num(double v) { return absl::StrFormat("%.9g", v); }

// One labelled group: {label="name"} or nothing for the total.
struct Labelled {
  std::string labels;  // without braces, e.g. user="alice"
  const GroupReport* group;
};

class Writer {
 public:
  Writer(absl::string_view prefix, std::vector<Labelled> groups)
      : prefix_(prefix), groups_(std::move(groups)) {}

  void Counter(absl::string_view name, absl::string_view help,
               const std::function<double(const GroupReport&)>& get) {
    Header(name, help, "counter");
    for (const Labelled& g : groups_) {
      Line(name, g.labels, "", get(*g.group));
    }
  }
  void Gauge(absl::string_view name, absl::string_view help, double v) {
    Header(name, help, "gauge");
    Line(name, "", "", v);
  }
  void Summary(absl::string_view name, absl::string_view help,
               DistributionSummary GroupReport::*field) {
    Header(name, help, "summary");
    for (const Labelled& g : groups_) {
      const DistributionSummary& d = g.group->*field;
      const std::pair<const char*, double> qs[] = {
          {"0.5", d.p50}, {"0.9", d.p90}, {"0.99", d.p99}, {"1", d.max}};
      for (const auto& [q, v] : qs) {
        Line(name, g.labels, absl::StrCat("quantile=\"", q, "\""), v);
      }
      Line(absl::StrCat(name, "_sum"), g.labels, "", d.mean * d.count);
      Line(absl::StrCat(name, "_count"), g.labels, "",
           static_cast<double>(d.count));
    }
  }
  std::string Take() { return std::move(out_); }

 private:
  void Header(absl::string_view name, absl::string_view help,
              absl::string_view type) {
    absl::StrAppend(&out_, "# HELP ", prefix_, "_", name, " ", help, "\n",
                    "# TYPE ", prefix_, "_", name, " ", type, "\n");
  }
  void Line(absl::string_view name, absl::string_view labels,
            absl::string_view extra, double v) {
    absl::StrAppend(&out_, prefix_, "_", name);
    if (!labels.empty() || !extra.empty()) {
      absl::StrAppend(&out_, "{", labels,
                      (!labels.empty() && !extra.empty()) ? "," : "", extra,
                      "}");
    }
    absl::StrAppend(&out_, " ", Num(v), "\n");
  }

  std::string prefix_;
  std::vector<Labelled> groups_;
  std::string out_;
};

}  // namespace

std::string PrometheusText(const MetricsReport& report,
                           std::string_view prefix) {
  std::vector<Labelled> groups;
  groups.push_back({"", &report.total});
  for (const GroupReport& g : report.users) {
    groups.push_back({absl::StrCat("user=\"", Escape(g.name), "\""), &g});
  }
  for (const GroupReport& g : report.classes) {
    groups.push_back({absl::StrCat("class=\"", Escape(g.name), "\""), &g});
  }
  const absl::string_view p(prefix.data(), prefix.size());
  Writer w(ValidName(p) ? p : "hearth", std::move(groups));
  using G = const GroupReport&;
  w.Counter("requests_arrived_total", "Requests seen by the scheduler.",
            [](G g) { return static_cast<double>(g.arrived); });
  w.Counter("requests_finished_total", "Requests that finished normally.",
            [](G g) { return static_cast<double>(g.finished); });
  w.Counter("requests_timed_out_total", "Requests that passed their deadline.",
            [](G g) { return static_cast<double>(g.timed_out); });
  w.Counter("requests_cancelled_total", "Requests cancelled by the host.",
            [](G g) { return static_cast<double>(g.cancelled); });
  w.Counter("requests_failed_total", "Requests rejected or failed.",
            [](G g) { return static_cast<double>(g.failed + g.rejected); });
  w.Counter("preemptions_total", "Preemptions of running requests.",
            [](G g) { return static_cast<double>(g.preemptions); });
  w.Counter("retries_total", "Engine failures retried.",
            [](G g) { return static_cast<double>(g.retries); });
  w.Counter("prefill_tokens_total", "Prompt positions computed (incl. recompute).",
            [](G g) { return static_cast<double>(g.prefill_tokens); });
  w.Counter("decode_tokens_total", "Decode steps served.",
            [](G g) { return static_cast<double>(g.decode_tokens); });
  w.Counter("output_tokens_total", "Tokens generated.",
            [](G g) { return static_cast<double>(g.output_tokens); });
  w.Counter("weighted_service_total", "VTC-weighted tokens served.",
            [](G g) { return g.weighted_service; });
  w.Counter("slo_met_total", "Requests that met their class SLO.",
            [](G g) { return static_cast<double>(g.slo_met); });
  w.Counter("slo_eligible_total", "Ended requests judged against the SLO.",
            [](G g) { return static_cast<double>(g.slo_eligible); });
  w.Summary("queue_wait_seconds", "Arrival to first admission.",
            &GroupReport::queue_wait);
  w.Summary("ttft_seconds", "Arrival to first token.", &GroupReport::ttft);
  w.Summary("itl_seconds", "Gap between consecutive tokens.",
            &GroupReport::itl);
  w.Summary("e2e_seconds", "Arrival to last token.", &GroupReport::e2e);
  w.Summary("normalized_latency_seconds", "End-to-end latency per output token.",
            &GroupReport::norm_latency);
  w.Gauge("output_tokens_per_second", "Output throughput over the window.",
          report.output_tokens_per_s);
  w.Gauge("goodput_requests_per_second", "Requests within SLO per second.",
          report.goodput_requests_per_s);
  w.Gauge("jain_index", "Jain's index over users' normalised service.",
          report.jain_index);
  w.Gauge("max_backlogged_service_gap",
          "Largest service gap between backlogged users (-1: not tracked).",
          report.max_backlogged_service_gap);
  return w.Take();
}

}  // namespace hearth

// Markdown, CSV and JSON renderings of a scenario's runs.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "hearth/metrics/sample_series.h"
#include "hearth/sim/fifo_equivalence.h"
#include "hearth/sim/report_writer.h"

namespace hearth {
namespace {

std::string Ms(double seconds) { return absl::StrFormat("%.0f", seconds * 1e3); }
// Job completion time (arrival to last token, finished requests), seconds.
std::string Jct(const DistributionSummary& e2e) {
  if (e2e.count == 0) return "–";
  return absl::StrFormat("%.2f / %.2f", e2e.mean, e2e.p99);
}
std::string Pct(double f) { return absl::StrFormat("%.1f%%", 100 * f); }

double TotalService(const MetricsReport& r) {
  double s = 0;
  for (const GroupReport& u : r.users) s += u.normalized_service;
  return s;
}

// Nearest-rank percentiles of the complete workflows' latency, as every
// other distribution in the reports.
DistributionSummary WorkflowLatency(const SimulationResult& r) {
  SampleSeries series;
  for (double v : r.workflow_seconds) series.Add(v);
  return series.Summarize();
}

std::string Num(double v) {
  if (!std::isfinite(v)) return "null";
  return absl::StrFormat("%.6g", v);
}

using OrderedJson = nlohmann::ordered_json;

// `v` to six significant digits, the precision of results.csv; a whole number
// below 10^6 is an integer, as "%.6g" writes it there, so readers of either
// file see the same values and types. NaN and infinities are null.
OrderedJson JsonNum(double v) {
  if (!std::isfinite(v)) return nullptr;
  double rounded = 0;
  absl::SimpleAtod(absl::StrFormat("%.6g", v), &rounded);
  if (std::trunc(rounded) == rounded && std::abs(rounded) < 1e6) {
    return static_cast<int64_t>(rounded);
  }
  return rounded;
}

// Names come from TOML and are UTF-8; replacing bad bytes beats throwing.
std::string Dump(const OrderedJson& j) {
  return j.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

OrderedJson DistJson(const DistributionSummary& d) {
  return {{"count", d.count}, {"mean", JsonNum(d.mean)}, {"p50", JsonNum(d.p50)},
          {"p90", JsonNum(d.p90)}, {"p99", JsonNum(d.p99)}, {"max", JsonNum(d.max)}};
}

OrderedJson GroupJson(const GroupReport& g) {
  return {{"name", g.name}, {"weight", JsonNum(g.weight)}, {"arrived", g.arrived},
          {"finished", g.finished}, {"timed_out", g.timed_out}, {"cancelled", g.cancelled},
          {"rejected", g.rejected}, {"failed", g.failed}, {"preemptions", g.preemptions},
          {"retries", g.retries}, {"prefill_tokens", g.prefill_tokens},
          {"decode_tokens", g.decode_tokens}, {"output_tokens", g.output_tokens},
          {"weighted_service", JsonNum(g.weighted_service)},
          {"normalized_service", JsonNum(g.normalized_service)},
          {"queue_wait_s", DistJson(g.queue_wait)}, {"ttft_s", DistJson(g.ttft)},
          {"itl_s", DistJson(g.itl)}, {"e2e_s", DistJson(g.e2e)},
          {"norm_latency_s", DistJson(g.norm_latency)}, {"slo_eligible", g.slo_eligible},
          {"slo_met", g.slo_met}, {"slo_attainment", JsonNum(g.slo_attainment)}};
}

OrderedJson GroupsJson(const std::vector<GroupReport>& groups) {
  OrderedJson out = OrderedJson::array();
  for (const GroupReport& g : groups) out.push_back(GroupJson(g));
  return out;
}

// Present only when requests were refused, so results of runs without
// refusals keep their shape.
void AddRejectedReasons(const SimulationResult& res, OrderedJson& run) {
  if (res.submit_rejected_by_reason.empty()) return;
  OrderedJson reasons = OrderedJson::object();
  for (const auto& [reason, n] : res.submit_rejected_by_reason) reasons[reason] = n;
  run["submit_rejected_by_reason"] = std::move(reasons);
}

OrderedJson RunJson(const PolicyRun& run) {
  const SimulationResult& res = run.result;
  const MetricsReport& r = res.report;
  return {{"policy", run.policy}, {"cost_model", res.cost_model}, {"steps", res.steps},
          {"simulated_s", JsonNum(res.simulated_seconds)},
          {"submit_rejected", res.submit_rejected},
          {"dependents_dropped", res.dependents_dropped},
          {"prefix_hit_tokens", res.prefix_hit_tokens},
          {"swap_preemptions", res.swap_preemptions},
          {"recompute_preemptions", res.recompute_preemptions}, {"workflows", res.workflows},
          {"workflows_complete", res.workflow_seconds.size()},
          {"workflow_p50_s", JsonNum(WorkflowLatency(res).p50)},
          {"window_s", JsonNum(r.window_seconds)}, {"busy_s", JsonNum(r.busy_seconds)},
          {"output_tokens_per_s", JsonNum(r.output_tokens_per_s)},
          {"prefill_tokens_per_s", JsonNum(r.prefill_tokens_per_s)},
          {"finished_per_s", JsonNum(r.finished_per_s)},
          {"goodput_requests_per_s", JsonNum(r.goodput_requests_per_s)},
          {"goodput_tokens_per_s", JsonNum(r.goodput_tokens_per_s)},
          {"jain_index", JsonNum(r.jain_index)},
          {"max_backlogged_service_gap", JsonNum(r.max_backlogged_service_gap)},
          {"max_accumulated_service_difference",
           JsonNum(res.max_accumulated_service_difference)},
          {"total", GroupJson(r.total)}, {"classes", GroupsJson(r.classes)},
          {"users", GroupsJson(r.users)}};
}

// `res`: the run's totals beyond the report, written on its "total" row
// only (null: the columns are left empty).
void CsvRow(std::string& out, const std::string& policy, const char* kind,
            const GroupReport& g, const SimulationResult* res) {
  const DistributionSummary* ds[] = {&g.queue_wait, &g.ttft, &g.itl, &g.e2e,
                                     &g.norm_latency};
  absl::StrAppend(&out, policy, ",", kind, ",", g.name, ",", g.arrived, ",", g.finished,
                  ",", g.timed_out, ",", g.rejected + g.failed, ",", g.preemptions, ",", g.retries, ",",
                  g.prefill_tokens, ",", g.decode_tokens, ",", g.output_tokens, ",",
                  Num(g.weighted_service), ",", Num(g.normalized_service));
  for (const DistributionSummary* d : ds) {
    absl::StrAppend(&out, ",", Num(d->mean), ",", Num(d->p50), ",", Num(d->p90), ",",
                    Num(d->p99), ",", Num(d->max));
  }
  absl::StrAppend(&out, ",", Num(g.slo_attainment));
  if (res != nullptr) {
    absl::StrAppend(&out, ",", res->swap_preemptions, ",", res->recompute_preemptions, "\n");
  } else {
    absl::StrAppend(&out, ",,\n");
  }
}

}  // namespace

namespace {

// "| first | policy... |" and its alignment row.
std::string PolicyColumnsHeader(const char* first, const std::vector<PolicyRun>& runs) {
  std::string out = absl::StrCat("| ", first, " |");
  for (const PolicyRun& run : runs) absl::StrAppend(&out, " ", run.policy, " |");
  absl::StrAppend(&out, "\n|---|");
  for (size_t i = 0; i < runs.size(); ++i) absl::StrAppend(&out, "---|");
  absl::StrAppend(&out, "\n");
  return out;
}

// Each row's counts add up: arrived = finished + timed out + rejected +
// failed (the simulator cancels nothing), and arrived + not issued = the
// workload's requests.
void AppendHeadline(std::string& out, const std::vector<PolicyRun>& runs) {
  absl::StrAppend(&out,
                  "| policy | arrived | finished | timed out | rejected | failed | not issued | "
                  "output tok/s | goodput req/s | "
                  "p50 TTFT ms | p99 TTFT ms | p99 ITL ms | mean / p99 JCT s | Jain | max gap | "
                  "preemptions (swap / recompute) |\n"
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const PolicyRun& run : runs) {
    const MetricsReport& r = run.result.report;
    absl::StrAppend(&out, "| ", run.policy, " | ", r.total.arrived, " | ", r.total.finished,
                    " | ", r.total.timed_out, " | ", r.total.rejected, " | ",
                    r.total.failed + r.total.cancelled, " | ", run.result.dependents_dropped,
                    " | ", absl::StrFormat("%.1f", r.output_tokens_per_s), " | ",
                    absl::StrFormat("%.3f", r.goodput_requests_per_s), " | ",
                    Ms(r.total.ttft.p50), " | ", Ms(r.total.ttft.p99), " | ",
                    Ms(r.total.itl.p99), " | ", Jct(r.total.e2e), " | ",
                    absl::StrFormat("%.3f", r.jain_index),
                    " | ",
                    r.max_backlogged_service_gap < 0
                        ? std::string("n/a")
                        : absl::StrFormat("%.0f", r.max_backlogged_service_gap),
                    " | ", r.total.preemptions, " (", run.result.swap_preemptions, " / ",
                    run.result.recompute_preemptions, ") |\n");
  }
}

void AppendWorkflows(std::string& out, const std::vector<PolicyRun>& runs) {
  if (runs.empty() || runs[0].result.workflows == 0) return;
  absl::StrAppend(&out, "\nAgent workflows (first call's arrival to last call's end), ",
                  runs[0].result.workflows, " of two or more calls:\n\n"
                  "| policy | complete | mean s | p50 s | p90 s | p99 s |\n"
                  "|---|---:|---:|---:|---:|---:|\n");
  for (const PolicyRun& run : runs) {
    const DistributionSummary d = WorkflowLatency(run.result);
    auto at = [&d](double v) {
      return d.count == 0 ? std::string("–") : absl::StrFormat("%.1f", v);
    };
    absl::StrAppend(&out, "| ", run.policy, " | ", d.count, " | ", at(d.mean), " | ", at(d.p50),
                    " | ",
                    at(d.p90), " | ", at(d.p99), " |\n");
  }
}

// ", 3 rejected" in a cell whose group had rejections (at submission
// included), so no table hides them; nothing otherwise.
std::string RejectedNote(const GroupReport& g) {
  return g.rejected == 0 ? std::string() : absl::StrCat(", ", g.rejected, " rejected");
}

// Per class: p50/p99 TTFT, p99 ITL and SLO attainment for each policy.
void AppendClasses(std::string& out, const Scenario& s, const std::vector<PolicyRun>& runs) {
  absl::StrAppend(&out,
                  "\nPer class — p50 / p99 TTFT ms, p99 ITL ms, mean / p99 JCT s, SLO met:\n\n",
                  PolicyColumnsHeader("class", runs));
  for (size_t c = 0; c < s.scheduler.work_classes.size(); ++c) {
    absl::StrAppend(&out, "| ", s.scheduler.work_classes[c].name, " |");
    for (const PolicyRun& run : runs) {
      const GroupReport& g = run.result.report.classes[c];
      if (g.arrived == 0) {
        absl::StrAppend(&out, " – |");
        continue;
      }
      absl::StrAppend(&out, " ", Ms(g.ttft.p50), " / ", Ms(g.ttft.p99), ", ",
                      Ms(g.itl.p99), ", ", Jct(g.e2e), ", ", Pct(g.slo_attainment),
                      RejectedNote(g), " |");
    }
    absl::StrAppend(&out, "\n");
  }
}

// Per user: share of weighted service and p99 TTFT.
void AppendUsers(std::string& out, const Scenario& s, const std::vector<PolicyRun>& runs) {
  absl::StrAppend(&out,
                  "\nPer user — share of weight-normalised service, p99 TTFT ms, mean / p99 "
                  "JCT s:\n\n",
                  PolicyColumnsHeader("user", runs));
  for (size_t u = 0; u < s.scheduler.users.size(); ++u) {
    absl::StrAppend(&out, "| ", s.scheduler.users[u].name, " |");
    for (const PolicyRun& run : runs) {
      const MetricsReport& r = run.result.report;
      const double total = TotalService(r);
      const GroupReport& g = r.users[u];
      absl::StrAppend(&out, " ", Pct(total > 0 ? g.normalized_service / total : 0), ", ",
                      Ms(g.ttft.p99), ", ", Jct(g.e2e), RejectedNote(g), " |");
    }
    absl::StrAppend(&out, "\n");
  }
}

// Why requests were refused at submission (they are counted as rejected in
// every table below); nothing is written when there are none.
void AppendRejected(std::string& out, const Scenario& s, const std::vector<PolicyRun>& runs) {
  std::vector<std::string> parts;
  for (const PolicyRun& run : runs) {
    const SimulationResult& r = run.result;
    if (r.submit_rejected == 0) continue;
    std::vector<std::string> reasons;
    for (const auto& [reason, n] : r.submit_rejected_by_reason) {
      reasons.push_back(reason == "over_context"
                            ? absl::StrCat(n, " over the model's ", s.scheduler.models[0].context_length,
                                           "-token context")
                            : absl::StrCat(n, " ", reason));
    }
    parts.push_back(absl::StrCat(run.policy, " ", r.submit_rejected, " (",
                                 absl::StrJoin(reasons, ", "), ")"));
  }
  if (parts.empty()) return;
  absl::StrAppend(&out, "Refused at submission (counted as arrived and rejected in every "
                  "table below): ", absl::StrJoin(parts, "; "), ".\n\n");
}

}  // namespace

std::string MarkdownReport(const Scenario& s, const std::vector<PolicyRun>& runs) {
  std::string out = absl::StrCat("### ", s.name, "\n\n");
  if (!s.description.empty()) absl::StrAppend(&out, s.description, "\n\n");
  if (!runs.empty()) {
    const SimulationResult& r0 = runs[0].result;
    // Every run replays the same workload: what one issued plus what it
    // never issued (a dependent call whose parent did not finish).
    const uint64_t requests = r0.report.total.arrived + r0.dependents_dropped;
    double shortest = r0.simulated_seconds;
    double longest = r0.simulated_seconds;
    for (const PolicyRun& run : runs) {
      shortest = std::min(shortest, run.result.simulated_seconds);
      longest = std::max(longest, run.result.simulated_seconds);
    }
    absl::StrAppend(&out, "GPU ", s.gpu.name, ", model ", s.model.name, ", ",
                    s.scheduler.kv.num_device_blocks, " KV blocks of ",
                    s.scheduler.kv.block_size, " tokens; cost: ", r0.cost_model, "; ",
                    requests, " requests in the workload over ",
                    shortest == longest ? absl::StrFormat("%.0f", longest)
                                        : absl::StrFormat("%.0f-%.0f", shortest, longest),
                    " simulated s. Per policy, arrived = finished + timed out + rejected + "
                    "failed, and arrived + not issued (calls whose parent did not finish) = "
                    "the workload.\n\n");
  }
  AppendRejected(out, s, runs);
  if (!runs.empty()) {
    for (const std::string& w : FifoEquivalenceWarnings(s, runs[0].result)) {
      absl::StrAppend(&out, "Warning: ", w, ".\n\n");
    }
  }
  AppendHeadline(out, runs);
  absl::StrAppend(&out, ReferenceFiguresMarkdown(s, runs));
  AppendWorkflows(out, runs);
  AppendClasses(out, s, runs);
  AppendUsers(out, s, runs);
  return out;
}

std::string ResultsCsv(const std::vector<PolicyRun>& runs) {
  std::string out =
      "policy,group_kind,group,arrived,finished,timed_out,failed,preemptions,retries,"
      "prefill_tokens,decode_tokens,output_tokens,weighted_service,normalized_service";
  for (const char* m : {"queue_wait", "ttft", "itl", "e2e", "norm_latency"}) {
    for (const char* q : {"mean", "p50", "p90", "p99", "max"}) {
      absl::StrAppend(&out, ",", m, "_", q, "_s");
    }
  }
  absl::StrAppend(&out, ",slo_attainment,swap_preemptions,recompute_preemptions\n");
  for (const PolicyRun& run : runs) {
    const MetricsReport& r = run.result.report;
    CsvRow(out, run.policy, "total", r.total, &run.result);
    for (const GroupReport& g : r.classes) CsvRow(out, run.policy, "class", g, nullptr);
    for (const GroupReport& g : r.users) CsvRow(out, run.policy, "user", g, nullptr);
  }
  return out;
}

std::string ResultsJson(const Scenario& s, const std::vector<PolicyRun>& runs) {
  const OrderedJson head = {{"scenario", s.name},
                            {"gpu", s.gpu.name},
                            {"model", s.model.name},
                            {"seed", s.seed}};
  // The same object as a single dump, but with each run on a line of its own
  // so that two result files diff run by run.
  std::string out = Dump(head);
  out.pop_back();  // the closing brace; "runs" follows
  absl::StrAppend(&out, ",\"runs\":[");
  for (size_t i = 0; i < runs.size(); ++i) {
    OrderedJson run = RunJson(runs[i]);
    AddRejectedReasons(runs[i].result, run);
    absl::StrAppend(&out, i ? "," : "", "\n", Dump(run));
  }
  absl::StrAppend(&out, "\n]}\n");
  return out;
}

}  // namespace hearth

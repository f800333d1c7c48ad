#include "hearth/sim/load_grid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hearth/sim/load_scaling.h"
#include "hearth/sim/simulator.h"
#include "internal/status_macros.h"

namespace hearth {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

absl::Status CheckOptions(const LoadGridOptions& o) {
  if (o.loads.empty()) return absl::InvalidArgumentError("the load grid lists no load");
  for (double load : o.loads) {
    if (!(load > 0 && load < 100)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the load grid has load ", load, "; each must be in (0, 100)"));
    }
  }
  if (o.seeds < 1 || o.seeds > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("the load grid has seeds = ", o.seeds, "; must be in [1, 64]"));
  }
  if (!(o.min_slo_ratio > 0 && o.min_slo_ratio <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_slo_ratio is ", o.min_slo_ratio, "; must be in (0, 1]"));
  }
  if (!(o.max_preemption_ratio >= 1 && std::isfinite(o.max_preemption_ratio))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_preemption_ratio is ", o.max_preemption_ratio, "; must be finite and >= 1"));
  }
  return absl::OkStatus();
}

bool HasSloTargets(const Scenario& s) {
  for (const SloTarget& t : s.class_slos) {
    if (t.ttft != absl::InfiniteDuration() || t.tpot != absl::InfiniteDuration() ||
        t.e2e != absl::InfiniteDuration()) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<LoadGridCell> RunCell(const Scenario& s, const Workload& w,
                                     const std::string& policy, double load) {
  HEARTH_ASSIGN_OR_RETURN(SimulationOptions o, SimulationOptionsFor(s, policy));
  o.record_timeline = false;
  absl::StatusOr<SimulationResult> r = RunSimulation(w, o);
  if (!r.ok()) {
    return absl::Status(r.status().code(), absl::StrCat(policy, " at load ", load, ": ",
                                                        r.status().message()));
  }
  LoadGridCell c;
  c.load = load;
  c.policy = policy;
  c.slo_eligible = r->report.total.slo_eligible;
  c.slo_met = r->report.total.slo_met;
  c.slo_share = r->report.total.slo_attainment;
  c.preemptions = r->report.total.preemptions;
  c.swap_preemptions = r->swap_preemptions;
  c.recompute_preemptions = r->recompute_preemptions;
  c.finished = r->report.total.e2e.count;
  for (const GroupReport& cls : r->report.classes) {
    c.classes.push_back({.name = cls.name,
                         .slo_eligible = cls.slo_eligible,
                         .slo_met = cls.slo_met,
                         .slo_share = cls.slo_attainment});
  }
  c.jct_mean_s = c.finished > 0 ? r->report.total.e2e.mean : kNaN;
  c.jct_p99_s = c.finished > 0 ? r->report.total.e2e.p99 : kNaN;
  return c;
}

// Adds one draw's cell `d` into `sum`; `p99_draws` counts the draws whose
// p99 is in it (those that finished anything).
void AddDraw(const LoadGridCell& d, int32_t* p99_draws, LoadGridCell& sum) {
  if (sum.classes.size() < d.classes.size()) sum.classes.resize(d.classes.size());
  for (size_t i = 0; i < d.classes.size(); ++i) {
    LoadGridClass& c = sum.classes[i];
    c.name = d.classes[i].name;
    c.slo_eligible += d.classes[i].slo_eligible;
    c.slo_met += d.classes[i].slo_met;
    c.slo_share = c.slo_eligible > 0 ? static_cast<double>(c.slo_met) / c.slo_eligible : 1.0;
  }
  sum.slo_eligible += d.slo_eligible;
  sum.slo_met += d.slo_met;
  sum.slo_share = sum.slo_eligible > 0
                      ? static_cast<double>(sum.slo_met) / sum.slo_eligible
                      : 1.0;
  sum.preemptions += d.preemptions;
  sum.swap_preemptions += d.swap_preemptions;
  sum.recompute_preemptions += d.recompute_preemptions;
  if (d.finished == 0) return;
  if (sum.finished == 0) {
    sum.jct_mean_s = d.jct_mean_s;
    sum.jct_p99_s = d.jct_p99_s;
  } else {
    const double total = static_cast<double>(sum.finished + d.finished);
    sum.jct_mean_s = sum.jct_mean_s * (sum.finished / total) + d.jct_mean_s * (d.finished / total);
    sum.jct_p99_s += (d.jct_p99_s - sum.jct_p99_s) / (*p99_draws + 1);
  }
  ++*p99_draws;
  sum.finished += d.finished;
}

// Ratios and violations of `c` against `fifo` at the same load.
void Compare(const LoadGridCell& fifo, const LoadGridResult& g, LoadGridCell& c) {
  c.slo_vs_fifo = fifo.slo_met > 0 ? static_cast<double>(c.slo_met) / fifo.slo_met : kNaN;
  c.slo_violation = fifo.slo_met > 0 && c.slo_vs_fifo < g.min_slo_ratio;
  if (fifo.preemptions > 0) {
    c.preemptions_vs_fifo = static_cast<double>(c.preemptions) / fifo.preemptions;
  } else {
    c.preemptions_vs_fifo =
        c.preemptions > 0 ? std::numeric_limits<double>::infinity() : kNaN;
  }
  c.preemption_violation =
      static_cast<double>(c.preemptions) > g.max_preemption_ratio * fifo.preemptions;
  for (size_t i = 0; i < c.classes.size() && i < fifo.classes.size(); ++i) {
    LoadGridClass& cls = c.classes[i];
    cls.below_fifo = cls.slo_eligible > 0 && fifo.classes[i].slo_eligible > 0 &&
                     cls.slo_share < fifo.classes[i].slo_share;
  }
  c.jct_mean_vs_fifo = fifo.jct_mean_s > 0 ? c.jct_mean_s / fifo.jct_mean_s : kNaN;
  c.jct_p99_vs_fifo = fifo.jct_p99_s > 0 ? c.jct_p99_s / fifo.jct_p99_s : kNaN;
}

std::string Ratio(double r) {
  if (std::isnan(r)) return "–";
  if (std::isinf(r)) return "∞";
  return absl::StrFormat("%.2fx", r);
}

// SLO met per class and cell; a share below FIFO's for the class at the
// same load is marked.
std::string ClassTable(const LoadGridResult& g) {
  if (g.cells.empty() || g.cells.front().classes.empty()) return "";
  std::string out = "SLO met per class (below FIFO's share at the same load: **bold**, ↓):\n\n| load | policy |";
  std::string rule = "|---:|---|";
  for (const LoadGridClass& c : g.cells.front().classes) {
    absl::StrAppend(&out, " ", c.name, " |");
    absl::StrAppend(&rule, "---:|");
  }
  absl::StrAppend(&out, "\n", rule, "\n");
  for (const LoadGridCell& cell : g.cells) {
    absl::StrAppendFormat(&out, "| %.2f | %s |", cell.load, cell.policy);
    for (const LoadGridClass& c : cell.classes) {
      if (c.slo_eligible == 0) {
        absl::StrAppend(&out, " – |");
      } else if (c.below_fifo) {
        absl::StrAppendFormat(&out, " **%.1f%%** ↓ |", c.slo_share * 100);
      } else {
        absl::StrAppendFormat(&out, " %.1f%% |", c.slo_share * 100);
      }
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<LoadGridResult> RunLoadGrid(const Scenario& s, const LoadGridOptions& o) {
  HEARTH_RETURN_IF_ERROR(CheckOptions(o));
  HEARTH_ASSIGN_OR_RETURN(LoadScaling scaling,
                          LoadScaling::Create(s, o.reference_capacity_per_s));
  LoadGridResult g;
  g.scenario = s.name;
  g.capacity_per_s = scaling.capacity_per_s();
  g.capacity_pinned = o.reference_capacity_per_s > 0;
  g.scaling = scaling.Describe();
  g.has_slo_targets = HasSloTargets(s);
  g.min_slo_ratio = o.min_slo_ratio;
  g.max_preemption_ratio = o.max_preemption_ratio;
  g.first_seed = s.seed;
  g.seeds = o.seeds;
  // Each further seed's draw, at the capacity of the scenario's own seed.
  std::vector<Scenario> draws(static_cast<size_t>(o.seeds), s);
  std::vector<LoadScaling> scalings;
  scalings.reserve(draws.size());
  scalings.push_back(scaling);
  for (size_t k = 1; k < draws.size(); ++k) {
    draws[k].seed = s.seed + k;
    HEARTH_ASSIGN_OR_RETURN(LoadScaling at_seed,
                            LoadScaling::Create(draws[k], g.capacity_per_s));
    scalings.push_back(std::move(at_seed));
  }
  // Policies in the scenario's order, FIFO first (the reference) even when
  // the scenario does not list it.
  std::vector<std::string> runs = {"fifo"};
  for (const std::string& policy : s.policies) {
    if (policy != "fifo") runs.push_back(policy);
  }
  std::vector<LoadGridCell> sums(runs.size());
  std::vector<int32_t> p99_draws(runs.size());
  for (double load : o.loads) {
    std::fill(sums.begin(), sums.end(), LoadGridCell{});
    std::fill(p99_draws.begin(), p99_draws.end(), 0);
    for (size_t k = 0; k < draws.size(); ++k) {
      HEARTH_ASSIGN_OR_RETURN(Workload w, scalings[k].WorkloadAt(load));
      for (size_t i = 0; i < runs.size(); ++i) {
        if (o.on_run) o.on_run(runs[i], load);
        HEARTH_ASSIGN_OR_RETURN(LoadGridCell d, RunCell(draws[k], w, runs[i], load));
        AddDraw(d, &p99_draws[i], sums[i]);
        sums[i].load = load;
        sums[i].policy = runs[i];
      }
    }
    for (const std::string& policy : s.policies) {
      const size_t i = static_cast<size_t>(
          std::find(runs.begin(), runs.end(), policy) - runs.begin());
      LoadGridCell c = sums[i];
      Compare(sums[0], g, c);
      g.cells.push_back(std::move(c));
    }
  }
  return g;
}

std::string LoadGridMarkdown(const LoadGridResult& g) {
  std::string out = absl::StrFormat(
      "### No-collapse grid: %s\n\nLoad 1.0 = %.3f requests/s (%s), applied by %s. SLO met = "
      "requests that finished within every target of their class (share: of the requests "
      "ended, not cancelled); vs fifo compares the requests met, since a closed-loop workload "
      "sends a faster policy more. Violation: SLO met < %.2fx FIFO's, or preemptions > %.2fx "
      "FIFO's, at the same load on the same workload.\n\n",
      g.scenario, g.capacity_per_s,
      g.capacity_pinned ? "pinned" : "FIFO's saturated capacity, measured", g.scaling,
      g.min_slo_ratio, g.max_preemption_ratio);
  if (g.seeds > 1) {
    absl::StrAppendFormat(&out,
                          "Each cell sums %d workload draws (seeds %d-%d, every policy on the "
                          "same draws): requests and preemptions are totals, JCT mean is over "
                          "every finished request, JCT p99 the mean of the draws' p99s.\n\n",
                          g.seeds, g.first_seed, g.first_seed + g.seeds - 1);
  }
  if (!g.has_slo_targets) {
    absl::StrAppend(&out, "This scenario sets no SLO target: \"SLO met\" is the share of "
                          "requests that finished.\n\n");
  }
  absl::StrAppend(&out,
                  "| load | policy | SLO met | vs fifo | preemptions (swap / recompute) | vs fifo "
                  "| JCT mean s | vs fifo | JCT p99 s | vs fifo | verdict |\n"
                  "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (const LoadGridCell& c : g.cells) {
    std::string verdict;
    if (c.slo_violation) {
      verdict = absl::StrFormat("**VIOLATION** SLO < %.2fx", g.min_slo_ratio);
    }
    if (c.preemption_violation) {
      absl::StrAppend(&verdict, verdict.empty() ? "**VIOLATION** " : "; ",
                      absl::StrFormat("preemptions > %.2fx", g.max_preemption_ratio));
    }
    absl::StrAppendFormat(
        &out, "| %.2f | %s | %.1f%% (%d/%d) | %s | %d (%d / %d) | %s | %.2f | %s | %.2f | %s | %s |\n",
        c.load, c.policy, c.slo_share * 100, c.slo_met, c.slo_eligible, Ratio(c.slo_vs_fifo),
        c.preemptions, c.swap_preemptions, c.recompute_preemptions, Ratio(c.preemptions_vs_fifo),
        c.jct_mean_s, Ratio(c.jct_mean_vs_fifo), c.jct_p99_s, Ratio(c.jct_p99_vs_fifo),
        verdict.empty() ? "ok" : verdict);
  }
  absl::StrAppend(&out, "\n", ClassTable(g));
  return out;
}

}  // namespace hearth

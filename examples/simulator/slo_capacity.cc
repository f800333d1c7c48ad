#include "slo_capacity.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hearth/sim/capacity_search.h"
#include "hearth/sim/load_scaling.h"
#include "hearth/sim/simulator.h"

namespace hearth_cli {
namespace {

// One policy at one load: each class's SLO attainment and the preemptions.
struct Point {
  std::vector<std::pair<std::string, double>> attainment;
  uint64_t preemptions = 0;
  double worst = 1;  // the least attainment over classes with requests
};

class LoadRunner {
 public:
  LoadRunner(const hearth::Scenario& s, const hearth::LoadScaling& scaling)
      : scenario_(s), scaling_(scaling) {}

  absl::StatusOr<Point> Run(const std::string& policy, double load) {
    auto key = std::make_pair(policy, load);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    absl::StatusOr<hearth::Workload> w = scaling_.WorkloadAt(load);
    if (!w.ok()) return w.status();
    absl::StatusOr<hearth::SimulationOptions> o = hearth::SimulationOptionsFor(scenario_, policy);
    if (!o.ok()) return o.status();
    o->record_timeline = false;
    absl::StatusOr<hearth::SimulationResult> r = hearth::RunSimulation(*w, *o);
    if (!r.ok()) return r.status();
    Point p;
    p.preemptions = r->report.total.preemptions;
    for (const hearth::GroupReport& c : r->report.classes) {
      if (c.slo_eligible == 0) continue;
      p.attainment.emplace_back(c.name, c.slo_attainment);
      p.worst = std::min(p.worst, c.slo_attainment);
    }
    cache_.emplace(key, p);
    return p;
  }

 private:
  const hearth::Scenario& scenario_;
  const hearth::LoadScaling& scaling_;
  std::map<std::pair<std::string, double>, Point> cache_;
};

}  // namespace

absl::StatusOr<std::string> SloCapacityReport(const hearth::Scenario& scenario,
                                              const SloCapacityOptions& options) {
  if (scenario.workload.kind != hearth::WorkloadSpec::Kind::kHousehold ||
      scenario.workload.load <= 0) {
    return absl::InvalidArgumentError(
        "--slo_capacity needs a household scenario whose [workload] sets load > 0");
  }
  if (!(options.target > 0 && options.target <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slo_target is ", options.target, "; must be in (0, 1]"));
  }
  absl::StatusOr<hearth::LoadScaling> scaling =
      hearth::LoadScaling::Create(scenario, options.reference_capacity_per_s);
  if (!scaling.ok()) return scaling.status();
  LoadRunner runner(scenario, *scaling);
  std::string out = absl::StrFormat(
      "### SLO capacity: %s\n\nLoad is offered calls / %s (%.3f requests/s). SLO capacity: the highest load at which every class meets its SLO for "
      ">= %.0f%% of its requests (bisection, %d steps in [%.2f, %.2f]).\n\n"
      "| policy | SLO capacity (load) | requests/s | vs fifo |\n|---|---:|---:|---:|\n",
      scenario.name,
      options.reference_capacity_per_s > 0 ? "a pinned reference capacity"
                                           : "the capacity FIFO sustains saturated",
      scaling->capacity_per_s(), options.target * 100, options.steps, options.low,
      options.high);
  double fifo_capacity = 0;
  for (const std::string& policy : scenario.policies) {
    if (options.steps <= 0) break;
    absl::StatusOr<hearth::BisectionResult> found = hearth::BisectCapacity(
        {.low = options.low, .high = options.high, .steps = options.steps},
        [&](double load) -> absl::StatusOr<bool> {
          absl::StatusOr<Point> p = runner.Run(policy, load);
          if (!p.ok()) return p.status();
          return p->worst >= options.target;
        });
    if (!found.ok()) return found.status();
    const double lo = found->capacity;
    if (policy == "fifo") fifo_capacity = lo;
    absl::StrAppendFormat(&out, "| %s | %.3f | %.3f | %s |\n", policy, lo, lo * scaling->capacity_per_s(),
                          fifo_capacity > 0 ? absl::StrFormat("%.2fx", lo / fifo_capacity) : "");
  }
  absl::StrAppend(&out, "\nSLO attainment per class (voice / chat / agent / documents order of "
                        "the scenario), and preemptions, at each load:\n\n| load |");
  for (const std::string& policy : scenario.policies) absl::StrAppend(&out, " ", policy, " |");
  absl::StrAppend(&out, "\n|---:|");
  for (size_t i = 0; i < scenario.policies.size(); ++i) absl::StrAppend(&out, "---|");
  absl::StrAppend(&out, "\n");
  for (double load : options.grid) {
    absl::StrAppendFormat(&out, "| %.2f |", load);
    for (const std::string& policy : scenario.policies) {
      absl::StatusOr<Point> p = runner.Run(policy, load);
      if (!p.ok()) return p.status();
      std::string cell;
      for (const auto& [name, a] : p->attainment) {
        absl::StrAppendFormat(&cell, "%s%.1f", cell.empty() ? "" : "/", a * 100);
      }
      absl::StrAppendFormat(&out, " %s, %llu |", cell,
                            static_cast<unsigned long long>(p->preemptions));
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace hearth_cli

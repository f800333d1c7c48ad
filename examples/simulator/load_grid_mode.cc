#include "load_grid_mode.h"

#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "hearth/sim/load_grid.h"

namespace hearth_cli {

absl::StatusOr<std::vector<double>> ParseLoadList(absl::string_view flag, absl::string_view text) {
  std::vector<double> loads;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    double load = 0;
    if (!absl::SimpleAtod(part, &load) || !(load > 0 && load < 100)) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " has \"", part, "\"; each load must be a number in (0, 100)"));
    }
    loads.push_back(load);
  }
  return loads;
}

absl::StatusOr<std::string> LoadGridReport(const hearth::Scenario& scenario,
                                           const std::vector<double>& loads,
                                           double reference_capacity_per_s, int32_t seeds) {
  hearth::LoadGridOptions o;
  o.seeds = seeds;
  o.loads = loads;
  o.reference_capacity_per_s = reference_capacity_per_s;
  const absl::Time start = absl::Now();
  o.on_run = [&](const std::string& policy, double load) {
    std::fprintf(stderr, "%s: %s at load %.2f (%.0f s so far)\n", scenario.name.c_str(),
                 policy.c_str(), load, absl::ToDoubleSeconds(absl::Now() - start));
  };
  absl::StatusOr<hearth::LoadGridResult> grid = hearth::RunLoadGrid(scenario, o);
  if (!grid.ok()) return grid.status();
  return hearth::LoadGridMarkdown(*grid);
}

}  // namespace hearth_cli

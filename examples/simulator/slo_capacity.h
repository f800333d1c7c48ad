// slo_capacity.h: the CLI's --slo_capacity mode. For a household scenario
// (one whose [workload] sets `load`), finds each policy's SLO capacity: the
// highest load, as a fraction of the FIFO capacity the scenario measures,
// at which every class meets its SLO for at least `target` of its requests.
// Load is bisected (attainment is assumed to fall with load), and a table of
// per-class attainment and preemptions at each load of a fixed grid is
// printed beside it, every policy run on the same workload at each load.

#ifndef HEARTH_EXAMPLES_SIMULATOR_SLO_CAPACITY_H_
#define HEARTH_EXAMPLES_SIMULATOR_SLO_CAPACITY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/sim/scenario_config.h"

namespace hearth_cli {

struct SloCapacityOptions {
  // Share of each class's requests that must meet the class SLO, in (0, 1].
  double target = 0.9;
  // Loads of the attainment table (fractions of measured capacity), each > 0.
  std::vector<double> grid = {0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1};
  // Bisection bounds and steps; 0 steps: no bisection, the table alone.
  double low = 0.2, high = 1.6;
  int steps = 7;
  // Requests/s that load 1.0 stands for; 0: FIFO's saturated capacity,
  // measured. Pinned, two builds are compared on the same offered loads.
  double reference_capacity_per_s = 0;
};

// The Markdown report (capacity per policy, then the attainment table).
// InvalidArgument when the scenario is not a household with `load` set.
absl::StatusOr<std::string> SloCapacityReport(const hearth::Scenario& scenario,
                                              const SloCapacityOptions& options);

}  // namespace hearth_cli

#endif  // HEARTH_EXAMPLES_SIMULATOR_SLO_CAPACITY_H_

// load_grid_mode.h: the CLI's --load_grid mode. Runs every policy of one
// scenario at each listed load (fractions of FIFO's saturated capacity, see
// hearth/sim/load_scaling.h) and prints the no-collapse table of
// hearth/sim/load_grid.h: SLO met and preemptions per load and policy, their
// ratios to FIFO, and the cells that violate.

#ifndef HEARTH_EXAMPLES_SIMULATOR_LOAD_GRID_MODE_H_
#define HEARTH_EXAMPLES_SIMULATOR_LOAD_GRID_MODE_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/sim/scenario_config.h"

namespace hearth_cli {

// "0.7,0.9,1" -> {0.7, 0.9, 1}; InvalidArgument naming `flag` unless every
// entry is a number in (0, 100).
absl::StatusOr<std::vector<double>> ParseLoadList(absl::string_view flag, absl::string_view text);

// The Markdown table for `scenario` at `loads`; `reference_capacity_per_s`
// > 0 pins what load 1.0 stands for; `seeds` workload draws per cell
// (LoadGridOptions::seeds). Progress goes to stderr.
absl::StatusOr<std::string> LoadGridReport(const hearth::Scenario& scenario,
                                           const std::vector<double>& loads,
                                           double reference_capacity_per_s, int32_t seeds);

}  // namespace hearth_cli

#endif  // HEARTH_EXAMPLES_SIMULATOR_LOAD_GRID_MODE_H_

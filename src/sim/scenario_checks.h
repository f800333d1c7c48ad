// The checks the library makes at run time (Scheduler::Create validating
// the scheduler options, MakePolicyFactory validating each policy's
// configuration), made once more when the scenario is read, so that an
// error names the TOML key that caused it ("evening.toml:23:
// classes[1].kv_block_budget: SchedulerOptions...") instead of surfacing
// from RunSimulation or SimulationOptionsFor with no location.

#ifndef HEARTH_SRC_SIM_SCENARIO_CHECKS_H_
#define HEARTH_SRC_SIM_SCENARIO_CHECKS_H_

#include <toml++/toml.h>

#include "absl/status/status.h"
#include "hearth/sim/scenario_config.h"
#include "sim/scenario_reader.h"

namespace hearth::internal {

// The scheduler options of `s` as Scheduler::Create will judge them.
absl::Status CheckSchedulerOptions(const ScenarioReader& r, const toml::table& root,
                                   const Scenario& s);

// Each policy `s` lists, as MakePolicyFactory will judge its configuration.
absl::Status CheckPolicies(const ScenarioReader& r, const toml::table& root,
                           const Scenario& s);

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_SCENARIO_CHECKS_H_

// File: hearth/sim/scenario_keys.h
//
// The scenario format's keys outside [workload]: for each, its table, unit,
// default, meaning and the library option it sets. The scenario reader
// accepts exactly these keys in those tables (anything else is an "unknown
// key" error), and bench/suites/README.md shows the same list, produced by
// ScenarioKeysMarkdown() (`hearth_sim_cli --print_scenario_keys`); a test
// checks that the README's copy equals it and that every key reaches the
// option it names, so the documentation cannot drift from the reader.
//
// [workload] keys depend on the workload kind and are documented beside the
// kinds in the README.
//
// Example:
//   for (const hearth::ScenarioKey& k : hearth::ScenarioKeys()) {
//     if (k.table == "engine") std::cout << k.key << " = " << k.default_value;
//   }

#ifndef HEARTH_SIM_SCENARIO_KEYS_H_
#define HEARTH_SIM_SCENARIO_KEYS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

namespace hearth {

struct ScenarioKey {
  // "" for the top level; "engine", "users", "classes", "policy.quotas", ...
  // (an array of tables is named without brackets).
  std::string_view table;
  std::string_view key;
  // "s", "ms", "tokens", "blocks", "bool", "string", "-" (a plain number)...
  std::string_view unit;
  // The value when the key is absent, as written in a scenario (or a phrase
  // such as "required" or "computed").
  std::string_view default_value;
  // What it changes, and the library option it sets, when there is one
  // ("SchedulerOptions::swap_block_cost_tokens").
  std::string_view meaning;
};

// Every key, grouped by table in the order the README lists them.
absl::Span<const ScenarioKey> ScenarioKeys();

// The keys of `table`, in the order of ScenarioKeys().
std::vector<std::string_view> ScenarioKeysOf(std::string_view table);

// The README's generated section: one Markdown table per scenario table.
// Pipes are never used inside cells.
std::string ScenarioKeysMarkdown();

// The comments that enclose the generated section in bench/suites/README.md.
inline constexpr std::string_view kScenarioKeysBegin =
    "<!-- scenario-keys:begin (generated: hearth_sim_cli --print_scenario_keys) -->";
inline constexpr std::string_view kScenarioKeysEnd = "<!-- scenario-keys:end -->";

}  // namespace hearth

#endif  // HEARTH_SIM_SCENARIO_KEYS_H_

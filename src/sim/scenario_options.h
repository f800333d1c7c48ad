// The scenario's tables that set library options: [scheduler] (every field
// of SchedulerOptions but its registries), [model] (ModelConfig beside the
// catalogue's name), each [[users]] entry (UserConfig) and each [[classes]]
// entry (WorkClassConfig). Their keys are the options schema's
// (hearth/scheduler/option_fields.h): the field's path, "_s" in seconds
// for a duration, "off" for InfiniteDuration; nested structs are TOML
// tables ([scheduler.kv] or `kv.block_size = 16`). Ranges and messages are
// the schema's, prefixed with where the key is.

#ifndef HEARTH_SRC_SIM_SCENARIO_OPTIONS_H_
#define HEARTH_SRC_SIM_SCENARIO_OPTIONS_H_

#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "absl/status/status.h"
#include "hearth/scheduler/option_fields.h"
#include "sim/scenario_reader.h"

namespace hearth::internal {

// The keys `scope`'s fields take in their table (a nested struct's name
// once, "kv"), then `extra`; with `nested` == "kv", those of its table.
std::vector<std::string> OptionTableKeys(OptionScope scope, std::string_view nested = "",
                                         std::initializer_list<std::string_view> extra = {});

// Checks `t`'s keys (and its nested tables') against the schema's for
// `scope` plus `extra`, then sets every field present in `t` on `target`.
// `path` is where `t` is ("scheduler", "classes[1]").
absl::Status ReadOptionTable(const ScenarioReader& r, const toml::table& t,
                             const std::string& path, SchedulerOptions& target,
                             std::initializer_list<std::string_view> extra = {});
absl::Status ReadOptionTable(const ScenarioReader& r, const toml::table& t,
                             const std::string& path, ModelConfig& target,
                             std::initializer_list<std::string_view> extra = {});
absl::Status ReadOptionTable(const ScenarioReader& r, const toml::table& t,
                             const std::string& path, UserConfig& target,
                             std::initializer_list<std::string_view> extra = {});
absl::Status ReadOptionTable(const ScenarioReader& r, const toml::table& t,
                             const std::string& path, WorkClassConfig& target,
                             std::initializer_list<std::string_view> extra = {});

// The scenario key of a field that a SchedulerOptions message names
// ("kv.watermark_blocks" -> "scheduler.kv.watermark_blocks",
// "work_classes[1].ttft_slo" -> "classes[1].ttft_slo_s"), or "" for none.
std::string ScenarioKeyOfField(std::string_view field);

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_SCENARIO_OPTIONS_H_

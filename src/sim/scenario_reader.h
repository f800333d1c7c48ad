// Typed access to a scenario's TOML tables with errors that name the file,
// line and dotted key. Shared by the scenario parser's parts.

#ifndef HEARTH_SRC_SIM_SCENARIO_READER_H_
#define HEARTH_SRC_SIM_SCENARIO_READER_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hearth/sim/length_distribution.h"
#include "hearth/sim/scenario_config.h"
#include "sim/toml_util.h"

namespace hearth::internal {

class ScenarioReader {
 public:
  ScenarioReader(std::string file, std::string base_dir)
      : file_(std::move(file)), base_dir_(std::move(base_dir)) {}

  const std::string& file() const { return file_; }
  absl::Status Error(const toml::node& at, const std::string& key,
                     absl::string_view what) const {
    return TomlError(file_, at.source(), key, std::string(what));
  }
  // The sub-table `key` of `t` (absent: an empty table, so defaults apply).
  absl::StatusOr<const toml::table*> Table(const toml::table& t,
                                           std::string_view key,
                                           const std::string& path) const;
  // The array of tables `key` (absent: empty).
  absl::StatusOr<std::vector<const toml::table*>> Tables(
      const toml::table& t, std::string_view key, const std::string& path) const;

  // Numbers with a range check: [lo, hi] inclusive; error "must be in ...".
  absl::StatusOr<double> Number(const toml::table& t, std::string_view key,
                                const std::string& path, std::optional<double> def,
                                double lo, double hi) const;
  absl::StatusOr<int64_t> Int(const toml::table& t, std::string_view key,
                              const std::string& path, std::optional<int64_t> def,
                              int64_t lo, int64_t hi) const;
  absl::StatusOr<std::string> String(const toml::table& t, std::string_view key,
                                     const std::string& path,
                                     std::optional<std::string> def) const;
  absl::StatusOr<bool> Bool(const toml::table& t, std::string_view key,
                            const std::string& path, std::optional<bool> def) const;
  absl::StatusOr<std::vector<std::string>> Strings(const toml::table& t,
                                                   std::string_view key,
                                                   const std::string& path) const;
  absl::StatusOr<std::vector<double>> Numbers(const toml::table& t,
                                              std::string_view key,
                                              const std::string& path) const;
  // Seconds as a Duration; absent gives `def`.
  absl::StatusOr<absl::Duration> Seconds(const toml::table& t, std::string_view key,
                                         const std::string& path,
                                         absl::Duration def) const;
  // How Duration() reads a key.
  struct DurationRule {
    // Seconds per unit written: 1 for "_s" keys, 1e-3 for "_ms" keys.
    double seconds_per_unit = 1;
    // The strings "off" and "none" give InfiniteDuration (no limit).
    bool off_allowed = false;
    // 0 is an error: the option needs a positive duration.
    bool positive = false;
  };
  // A number of units in [0, 1e9] as a Duration (or "off", see the rule);
  // absent gives `def`.
  absl::StatusOr<absl::Duration> Duration(const toml::table& t, std::string_view key,
                                          const std::string& path, absl::Duration def,
                                          DurationRule rule) const;
  // A length distribution inline table (see bench/suites/README.md).
  absl::StatusOr<LengthDistribution> Length(const toml::table& t,
                                            std::string_view key,
                                            const std::string& path,
                                            const LengthDistribution& def) const;
  // Index of `name` in `names`, else an error at `at` listing them.
  absl::StatusOr<uint32_t> Lookup(const toml::node& at, const std::string& key,
                                  const std::string& name,
                                  const std::vector<std::string>& names,
                                  std::string_view what) const;
  std::string Resolve(const std::string& path) const;

 private:
  std::string file_;
  std::string base_dir_;
};

std::vector<std::string> UserNames(const Scenario& s);
std::vector<std::string> ClassNames(const Scenario& s);

// The [hints] section.
absl::Status ParseHints(const ScenarioReader& r, const toml::table& root, Scenario& s);

// The top-level `policies` list and the [policy] section.
absl::Status ParsePolicy(const ScenarioReader& r, const toml::table& root, Scenario& s);

// A trace's TraceMapping keys (users, shares, assignment, time_scale,
// skip_s, duration_s, max_requests, default_class, class_rules) into
// s.workload.mapping.
inline constexpr std::string_view kMappingKeys[] = {
    "users", "shares", "assignment", "time_scale", "skip_s", "duration_s",
    "max_requests", "default_class", "class_rules"};
absl::Status ParseMapping(const ScenarioReader& r, const toml::table& w, Scenario& s);

// The [workload] keys of the mooncake, sharegpt, burstgpt and jsonl kinds,
// each with its own (ParseTraceKind) and those every kind shares ("kind",
// "flood", "request_cap"); empty for another kind.
std::vector<std::string_view> TraceKindKeys(std::string_view kind);
// Reads those kinds' keys into `s`, kind included.
absl::Status ParseTraceKind(const ScenarioReader& r, const toml::table& w, std::string_view kind,
                            Scenario& s);

// The workload of those kinds, read from s.workload.trace_path.
absl::StatusOr<Workload> LoadTraceKind(const Scenario& s);

// The [capacity] section (CapacitySpec); after [engine].
absl::Status ParseCapacity(const ScenarioReader& r, const toml::table& root, Scenario& s);

// The optional [paper] section (reference_figures.h); after the policies.
absl::Status ParsePaper(const ScenarioReader& r, const toml::table& root, Scenario& s);

// The [workload] section.
absl::Status ParseWorkload(const ScenarioReader& r, const toml::table& root,
                           Scenario& s);

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_SCENARIO_READER_H_

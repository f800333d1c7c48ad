// The [hints] section: what the simulated host tells the scheduler beyond
// the request itself (predicted output lengths, OutputHintOptions).

#include "hearth/sim/scenario_config.h"
#include "hearth/sim/scenario_keys.h"
#include "internal/status_macros.h"
#include "sim/scenario_reader.h"

namespace hearth::internal {

absl::Status ParseHints(const ScenarioReader& r, const toml::table& root, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(const toml::table* t, r.Table(root, "hints", ""));
  HEARTH_RETURN_IF_ERROR(CheckKeys(*t, ScenarioKeysOf("hints"), r.file(), "hints"));
  OutputHintOptions& o = s.output_hints;
  HEARTH_ASSIGN_OR_RETURN(o.enabled, r.Bool(*t, "output_length", "hints", o.enabled));
  HEARTH_ASSIGN_OR_RETURN(o.noise_sigma,
                          r.Number(*t, "output_length_noise", "hints", o.noise_sigma, 0, 10));
  return absl::OkStatus();
}

}  // namespace hearth::internal

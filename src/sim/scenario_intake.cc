// The [intake] section: the scheduler's intake limits, so that a scenario
// states every knob it runs with (defaults are the library's).

#include <cstdint>

#include "hearth/sim/scenario_config.h"
#include "hearth/sim/scenario_keys.h"
#include "internal/status_macros.h"
#include "sim/scenario_reader.h"

namespace hearth::internal {

absl::Status ParseIntake(const ScenarioReader& r, const toml::table& root, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(const toml::table* t, r.Table(root, "intake", ""));
  HEARTH_RETURN_IF_ERROR(CheckKeys(*t, ScenarioKeysOf("intake"), r.file(), "intake"));
  SchedulerOptions& o = s.scheduler;
  HEARTH_ASSIGN_OR_RETURN(int64_t pending, r.Int(*t, "max_pending_requests", "intake",
                                                 o.max_pending_requests, 1, INT32_MAX));
  o.max_pending_requests = static_cast<int32_t>(pending);
  HEARTH_ASSIGN_OR_RETURN(o.max_pending_bytes, r.Int(*t, "max_pending_bytes", "intake",
                                                     o.max_pending_bytes, 1, INT64_MAX));
  HEARTH_ASSIGN_OR_RETURN(o.reserved_pending_share,
                          r.Number(*t, "reserved_pending_share", "intake",
                                   o.reserved_pending_share, 0, 1));
  HEARTH_ASSIGN_OR_RETURN(int64_t intake, r.Int(*t, "max_intake_per_plan", "intake",
                                                o.max_intake_per_plan, 1, 1 << 20));
  o.max_intake_per_plan = static_cast<int32_t>(intake);
  HEARTH_ASSIGN_OR_RETURN(int64_t label, r.Int(*t, "max_label_bytes", "intake",
                                               o.max_label_bytes, 0, 1 << 24));
  o.max_label_bytes = static_cast<int32_t>(label);
  HEARTH_ASSIGN_OR_RETURN(o.max_arrival_lead,
                          r.Seconds(*t, "max_arrival_lead_s", "intake", o.max_arrival_lead));
  return absl::OkStatus();
}

}  // namespace hearth::internal

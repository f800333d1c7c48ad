// The [capacity] section: what `hearth_sim_cli --capacity` searches for
// (capacity_search.h's CapacitySpec).

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/scenario_keys.h"
#include "internal/status_macros.h"
#include "sim/scenario_reader.h"

namespace hearth::internal {
namespace {

constexpr int64_t kMaxBudget = 1 << 20;

// Each budget a whole number of tokens the engine can run: no fewer than the
// sequences it may batch (scheduler.max_running), as [engine] requires of
// max_batched_tokens.
absl::Status ParseBudgets(const ScenarioReader& r, const toml::table& t, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<double> budgets, r.Numbers(t, "token_budgets", "capacity"));
  const toml::array* nodes = budgets.empty() ? nullptr : t.get("token_budgets")->as_array();
  for (size_t i = 0; i < budgets.size(); ++i) {
    const double b = budgets[i];
    if (!(b == std::floor(b) && b >= s.scheduler.max_running && b <= kMaxBudget)) {
      return r.Error(*nodes->get(i), absl::StrCat("capacity.token_budgets[", i, "]"),
                     absl::StrCat("is ", b, "; must be a whole number of tokens in [",
                                  s.scheduler.max_running, " (scheduler.max_running), ", kMaxBudget,
                                  "]"));
    }
    s.capacity.token_budgets.push_back(static_cast<int32_t>(b));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseCapacity(const ScenarioReader& r, const toml::table& root, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(const toml::table* t, r.Table(root, "capacity", ""));
  HEARTH_RETURN_IF_ERROR(CheckKeys(*t, ScenarioKeysOf("capacity"), r.file(), "capacity"));
  CapacitySpec& c = s.capacity;
  constexpr ScenarioReader::DurationRule kMs{
      .seconds_per_unit = 1e-3, .off_allowed = true, .positive = true};
  constexpr ScenarioReader::DurationRule kS{.off_allowed = true, .positive = true};
  HEARTH_ASSIGN_OR_RETURN(c.criterion.p99_itl,
                          r.Duration(*t, "p99_itl_ms", "capacity", c.criterion.p99_itl, kMs));
  HEARTH_ASSIGN_OR_RETURN(c.criterion.p50_queue_wait,
                          r.Duration(*t, "p50_queue_wait_s", "capacity",
                                     c.criterion.p50_queue_wait, kS));
  HEARTH_ASSIGN_OR_RETURN(c.criterion.p50_ttft,
                          r.Duration(*t, "p50_ttft_s", "capacity", c.criterion.p50_ttft, kS));
  HEARTH_RETURN_IF_ERROR(ParseBudgets(r, *t, s));
  HEARTH_ASSIGN_OR_RETURN(c.bisection.low,
                          r.Number(*t, "low_per_s", "capacity", c.bisection.low, 1e-6, 1e6));
  HEARTH_ASSIGN_OR_RETURN(c.bisection.high, r.Number(*t, "high_per_s", "capacity",
                                                     c.bisection.high, c.bisection.low, 1e6));
  HEARTH_ASSIGN_OR_RETURN(int64_t steps,
                          r.Int(*t, "steps", "capacity", c.bisection.steps, 0, 64));
  c.bisection.steps = static_cast<int32_t>(steps);
  return absl::OkStatus();
}

}  // namespace hearth::internal

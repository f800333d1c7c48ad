#include "hearth/jobs/interactive_demand.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace hearth {
namespace {

constexpr int64_t kMaxBacklog = int64_t{1} << 30;
constexpr double kMinSlack = -1e6;

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, " ", what));
}

}  // namespace

absl::Status ValidateInteractiveDemand(const InteractiveDemand& demand) {
  if (demand.interactive_backlog < 0 || demand.interactive_backlog > kMaxBacklog) {
    return Invalid("InteractiveDemand.interactive_backlog",
                   absl::StrCat("is ", demand.interactive_backlog, "; must be in [0, ",
                                kMaxBacklog, "]"));
  }
  // `!(a <= x && x <= b)` also refuses NaN.
  if (!(demand.slo_slack >= kMinSlack && demand.slo_slack <= 1.0)) {
    return Invalid("InteractiveDemand.slo_slack",
                   absl::StrCat("is ", demand.slo_slack, "; must be finite, in [-1e6, 1]"));
  }
  return absl::OkStatus();
}

absl::Status ValidateGiveBackOptions(const GiveBackOptions& o) {
  const std::string f = "JobPoolOptions.give_back.";
  if (o.backlog_for_full_pressure < 1 || o.backlog_for_full_pressure > kMaxBacklog) {
    return Invalid(absl::StrCat(f, "backlog_for_full_pressure"),
                   absl::StrCat("is ", o.backlog_for_full_pressure, "; must be in [1, ",
                                kMaxBacklog, "]"));
  }
  if (!(o.slack_comfortable <= 1.0 && o.slack_comfortable >= kMinSlack)) {
    return Invalid(absl::StrCat(f, "slack_comfortable"),
                   absl::StrCat("is ", o.slack_comfortable, "; must be finite, in [-1e6, 1]"));
  }
  if (!(o.slack_exhausted >= kMinSlack && o.slack_exhausted < o.slack_comfortable)) {
    return Invalid(absl::StrCat(f, "slack_exhausted"),
                   absl::StrCat("is ", o.slack_exhausted,
                                "; must be finite, >= -1e6 and below slack_comfortable (",
                                o.slack_comfortable, ")"));
  }
  if (o.demand_expiry <= absl::ZeroDuration()) {
    return Invalid(absl::StrCat(f, "demand_expiry"),
                   absl::StrCat("is ", absl::FormatDuration(o.demand_expiry),
                                "; must be > 0 (InfiniteDuration() for never)"));
  }
  return absl::OkStatus();
}

double InteractivePressure(const InteractiveDemand& demand, const GiveBackOptions& o) {
  const double backlog = static_cast<double>(demand.interactive_backlog) /
                         static_cast<double>(o.backlog_for_full_pressure);
  const double slack = (o.slack_comfortable - demand.slo_slack) /
                       (o.slack_comfortable - o.slack_exhausted);
  const double pressure = std::max(backlog, slack);
  // Guards against a NaN from unvalidated input: no pressure, not a crash.
  if (!(pressure > 0)) return 0.0;
  return std::min(pressure, 1.0);
}

int BackgroundConcurrency(int max_concurrency, int concurrency_under_demand,
                          double pressure) {
  const double p = pressure > 0 ? std::min(pressure, 1.0) : 0.0;
  const double give_back = p * (max_concurrency - concurrency_under_demand);
  // Rounding the returned share up means any pressure at all gives back at
  // least part of a slot's worth, i.e. one slot once the share reaches it.
  const int limit =
      max_concurrency - static_cast<int>(std::ceil(give_back - 1e-9));
  return std::clamp(limit, concurrency_under_demand, max_concurrency);
}

}  // namespace hearth

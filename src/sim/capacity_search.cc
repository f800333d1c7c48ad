#include "hearth/sim/capacity_search.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "internal/status_macros.h"

namespace hearth {
namespace {

absl::Status CheckBisection(const BisectionOptions& o) {
  if (!(o.low > 0 && std::isfinite(o.low) && o.high >= o.low && std::isfinite(o.high))) {
    return absl::InvalidArgumentError(absl::StrCat("the bisection bounds are [", o.low, ", ",
                                                   o.high, "]; need 0 < low <= high, finite"));
  }
  if (o.steps < 0 || o.steps > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("the bisection has ", o.steps, " steps; must be in [0, 64]"));
  }
  return absl::OkStatus();
}

// Durations as the criterion's description and misses print them.
std::string Show(absl::Duration d) {
  return d < absl::Seconds(1) ? absl::StrFormat("%.4g ms", absl::ToDoubleMilliseconds(d))
                              : absl::StrFormat("%.4g s", absl::ToDoubleSeconds(d));
}

struct Bound {
  const char* name;
  absl::Duration LatencyCriterion::*limit;
  double DistributionSummary::*quantile;
  DistributionSummary GroupReport::*series;
};

constexpr Bound kBounds[] = {
    {"P99 ITL", &LatencyCriterion::p99_itl, &DistributionSummary::p99, &GroupReport::itl},
    {"median queue wait", &LatencyCriterion::p50_queue_wait, &DistributionSummary::p50,
     &GroupReport::queue_wait},
    {"median TTFT", &LatencyCriterion::p50_ttft, &DistributionSummary::p50, &GroupReport::ttft},
};

}  // namespace

absl::StatusOr<BisectionResult> BisectCapacity(
    const BisectionOptions& options, const std::function<absl::StatusOr<bool>(double)>& meets) {
  HEARTH_RETURN_IF_ERROR(CheckBisection(options));
  BisectionResult r;
  double lo = options.low, hi = options.high;
  auto judge = [&](double load) -> absl::StatusOr<bool> {
    r.tried.push_back(load);
    return meets(load);
  };
  HEARTH_ASSIGN_OR_RETURN(bool at_low, judge(lo));
  if (!at_low) {
    hi = lo;
    lo = 0;
    r.saw_failure = true;
  }
  for (int32_t i = 0; i < options.steps && hi > lo; ++i) {
    const double mid = (lo + hi) / 2;
    HEARTH_ASSIGN_OR_RETURN(bool ok, judge(mid));
    if (ok) {
      lo = mid;
    } else {
      hi = mid;
      r.saw_failure = true;
    }
  }
  r.capacity = lo;
  r.lowest_failing = hi;
  return r;
}

bool LatencyCriterion::empty() const {
  for (const Bound& b : kBounds) {
    if (this->*b.limit != absl::InfiniteDuration()) return false;
  }
  return true;
}

std::string LatencyCriterion::Describe() const {
  std::vector<std::string> parts;
  for (const Bound& b : kBounds) {
    if (this->*b.limit == absl::InfiniteDuration()) continue;
    parts.push_back(absl::StrCat(b.name, " <= ", Show(this->*b.limit)));
  }
  return parts.empty() ? "no bound" : absl::StrJoin(parts, ", ");
}

std::string LatencyCriterionMisses(const LatencyCriterion& criterion, const GroupReport& total) {
  if (criterion.empty()) return "";
  if (total.finished == 0) return "nothing finished";
  std::vector<std::string> misses;
  for (const Bound& b : kBounds) {
    const absl::Duration limit = criterion.*b.limit;
    if (limit == absl::InfiniteDuration()) continue;
    const absl::Duration value = absl::Seconds(total.*b.series.*b.quantile);
    if (value > limit) misses.push_back(absl::StrCat(b.name, " ", Show(value), " > ", Show(limit)));
  }
  return absl::StrJoin(misses, ", ");
}

}  // namespace hearth

#include "hearth/sim/load_scaling.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hearth/sim/simulator.h"
#include "internal/status_macros.h"

namespace hearth {
namespace {

constexpr int kMaxDoublings = 12;

// `w` with every independent arrival moved to first + (t - first) / factor.
Workload Compressed(const Workload& w, absl::Duration first, double factor) {
  Workload out = w;
  for (SimRequest& r : out.requests) {
    if (r.parent >= 0) continue;
    r.arrival = first + (r.arrival - first) / factor;
  }
  return out;
}

// Requests/s FIFO finishes while `w`, compressed by doubling factors, keeps
// it saturated (the backlog outlives the arrivals by 20%).
absl::StatusOr<double> MeasureTimeScaledCapacity(const Scenario& s, const Workload& w,
                                                 absl::Duration first, absl::Duration span) {
  HEARTH_ASSIGN_OR_RETURN(SimulationOptions o, SimulationOptionsFor(s, "fifo"));
  o.record_timeline = false;
  o.class_timeouts.clear();
  double factor = 1;
  for (int i = 0; i <= kMaxDoublings; ++i, factor *= 2) {
    HEARTH_ASSIGN_OR_RETURN(SimulationResult r, RunSimulation(Compressed(w, first, factor), o));
    const double busy = r.simulated_seconds - absl::ToDoubleSeconds(first);
    if (r.report.total.finished == 0 || busy <= 0) {
      return absl::InternalError(absl::StrCat(s.name, ": the capacity run finished nothing"));
    }
    if (busy > 1.2 * absl::ToDoubleSeconds(span) / factor) {
      return r.report.total.finished / busy;
    }
  }
  return absl::InternalError(absl::StrCat(
      s.name, ": could not saturate FIFO to measure capacity (arrivals compressed ",
      factor / 2, "x)"));
}

}  // namespace

absl::StatusOr<LoadScaling> LoadScaling::Create(const Scenario& scenario,
                                                double pinned_capacity_per_s) {
  if (!(pinned_capacity_per_s >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the pinned capacity is ", pinned_capacity_per_s, " requests/s; must be >= 0 (0: measure)"));
  }
  LoadScaling l;
  l.scenario_ = scenario;
  l.household_scale_ = scenario.workload.kind == WorkloadSpec::Kind::kHousehold &&
                       scenario.workload.load > 0;
  if (l.household_scale_) {
    Scenario probe = scenario;
    // With a pinned capacity the calibration run is not needed: ask for
    // offered calls/s at load_scale 1 alone.
    if (pinned_capacity_per_s > 0) probe.workload.load = 0;
    WorkloadCalibration c;
    HEARTH_RETURN_IF_ERROR(BuildWorkload(probe, &c).status());
    l.capacity_per_s_ = pinned_capacity_per_s > 0 ? pinned_capacity_per_s : c.capacity_per_s;
    l.offered_per_s_at_unit_ = c.offered_per_s_at_unit_scale;
    return l;
  }
  HEARTH_ASSIGN_OR_RETURN(l.base_, BuildWorkload(scenario, nullptr));
  absl::Duration first = absl::InfiniteDuration(), last = -absl::InfiniteDuration();
  for (const SimRequest& r : l.base_.requests) {
    if (r.parent >= 0) continue;
    first = std::min(first, r.arrival);
    last = std::max(last, r.arrival);
  }
  if (l.base_.requests.empty() || !(last > first)) {
    return absl::InvalidArgumentError(absl::StrCat(
        scenario.name, ": the workload has ", l.base_.requests.size(),
        " requests and no span of arrivals; time scaling needs arrivals at two or more instants"));
  }
  l.first_arrival_ = first;
  l.offered_per_s_at_unit_ =
      static_cast<double>(l.base_.requests.size()) / absl::ToDoubleSeconds(last - first);
  if (pinned_capacity_per_s > 0) {
    l.capacity_per_s_ = pinned_capacity_per_s;
  } else {
    HEARTH_ASSIGN_OR_RETURN(l.capacity_per_s_,
                            MeasureTimeScaledCapacity(scenario, l.base_, first, last - first));
  }
  return l;
}

absl::StatusOr<Workload> LoadScaling::WorkloadAt(double load) const {
  if (!(load > 0 && load < 100)) {
    return absl::InvalidArgumentError(absl::StrCat("load is ", load, "; must be in (0, 100)"));
  }
  const double factor = load * capacity_per_s_ / offered_per_s_at_unit_;
  if (!household_scale_) return Compressed(base_, first_arrival_, factor);
  Scenario s = scenario_;
  s.workload.load = 0;  // the scale is set directly: no second capacity run
  s.workload.household.load_scale = factor;
  return BuildWorkload(s, nullptr);
}

std::string LoadScaling::Describe() const {
  return household_scale_
             ? absl::StrFormat("household load_scale (%.3f calls/s at scale 1)",
                               offered_per_s_at_unit_)
             : absl::StrFormat("time scale (%.3f requests/s as recorded)", offered_per_s_at_unit_);
}

}  // namespace hearth

// The VTC paper's "accumulated service difference" over a run's time series
// (see SimulationResult::max_accumulated_service_difference).

#ifndef HEARTH_SRC_SIM_SERVICE_DIFFERENCE_H_
#define HEARTH_SRC_SIM_SERVICE_DIFFERENCE_H_

#include <vector>

#include "hearth/metrics/metrics_collector.h"
#include "hearth/metrics/metrics_report.h"

namespace hearth::internal {

// Over the points of `series` at or before `horizon_s` (seconds since the
// first arrival), the largest difference between the most and the least
// accumulated normalised service among the users of `users` with arrivals.
// 0 when fewer than two users had arrivals or no point qualifies.
double MaxAccumulatedServiceDifference(const std::vector<SeriesPoint>& series,
                                       const std::vector<GroupReport>& users,
                                       double horizon_s);

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_SERVICE_DIFFERENCE_H_

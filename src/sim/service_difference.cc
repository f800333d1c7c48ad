#include "sim/service_difference.h"

#include <algorithm>
#include <limits>

namespace hearth::internal {

double MaxAccumulatedServiceDifference(const std::vector<SeriesPoint>& series,
                                       const std::vector<GroupReport>& users,
                                       double horizon_s) {
  std::vector<size_t> active;
  for (size_t u = 0; u < users.size(); ++u) {
    if (users[u].arrived > 0) active.push_back(u);
  }
  if (active.size() < 2) return 0;
  double largest = 0;
  for (const SeriesPoint& p : series) {
    if (p.time_s > horizon_s) break;
    double most = -std::numeric_limits<double>::infinity();
    double least = std::numeric_limits<double>::infinity();
    for (size_t u : active) {
      const double s = u < p.user_service.size() ? p.user_service[u] : 0;
      most = std::max(most, s);
      least = std::min(least, s);
    }
    largest = std::max(largest, most - least);
  }
  return largest;
}

}  // namespace hearth::internal

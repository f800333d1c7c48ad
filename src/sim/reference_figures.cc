#include "hearth/sim/reference_figures.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hearth {

absl::StatusOr<double> MeasuredFigure(std::string_view figure, const SimulationResult& r) {
  if (figure == "max_accumulated_service_difference") {
    return r.max_accumulated_service_difference;
  }
  if (figure == "max_backlogged_service_gap") return r.report.max_backlogged_service_gap;
  if (figure == "output_tokens_per_s") return r.report.output_tokens_per_s;
  if (figure == "finished_per_s") return r.report.finished_per_s;
  return absl::InvalidArgumentError(absl::StrCat("unknown figure \"", std::string(figure), "\"; known: ",
                                                 absl::StrJoin(kReferenceFigureNames, ", ")));
}

bool IsCapacityFigure(std::string_view figure) {
  for (const char* name : kCapacityFigureNames) {
    if (figure == name) return true;
  }
  return false;
}

}  // namespace hearth

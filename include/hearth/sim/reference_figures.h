// File: hearth/sim/reference_figures.h
//
// Published figures a scenario reproduces (a paper's measurements), kept in
// the scenario's optional [paper] table and printed in the report beside
// what Hearth measured on the same scenario. A figure names one of the
// measures below, the policy it was measured under, and its value in that
// measure's unit; the report shows both values and their ratio, so a reader
// sees how close the reproduction is without opening the paper.
//
//   [paper]
//   source = "Sheng et al., Fairness in Serving LLMs (OSDI'24), Figure 3"
//   [[paper.figure]]
//   policy = "vtc"
//   figure = "max_accumulated_service_difference"
//   value = 8100
//
// Example:
//   hearth::SimulationResult result;   // what RunSimulation returned
//   absl::StatusOr<double> hearth_value =
//       hearth::MeasuredFigure("output_tokens_per_s", result);

#ifndef HEARTH_SIM_REFERENCE_FIGURES_H_
#define HEARTH_SIM_REFERENCE_FIGURES_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/sim/simulator.h"

namespace hearth {

// The measures a reference figure may name, each as SimulationResult has it:
//   max_accumulated_service_difference  weighted tokens (VTC's cost), see
//                                       SimulationResult
//   max_backlogged_service_gap          weighted tokens, MetricsReport's
//   output_tokens_per_s                 output tokens per second of the run
//   finished_per_s                      finished requests per second
inline constexpr const char* kReferenceFigureNames[] = {
    "max_accumulated_service_difference", "max_backlogged_service_gap",
    "output_tokens_per_s", "finished_per_s"};

// Figures `hearth_sim_cli --capacity` measures (latency_capacity.h), per
// policy, over the token budgets of the scenario's [capacity] table:
//   capacity_gain    its capacity at the last budget / at the first (x)
//   capacity_per_s   its capacity at the last budget, requests per second
// The plain report leaves them out; the capacity report prints only them.
inline constexpr const char* kCapacityFigureNames[] = {"capacity_gain", "capacity_per_s"};

struct ReferenceFigure {
  // A policy of the scenario's list, and one of kReferenceFigureNames or
  // kCapacityFigureNames.
  std::string policy;
  std::string figure;
  // Finite, >= 0, in the measure's unit.
  double value = 0;
  // Where in the source the value comes from, or how it was read.
  std::string note;
};

struct ReferenceFigures {
  // The publication (empty when the scenario has no [paper] table).
  std::string source;
  std::vector<ReferenceFigure> figures;
};

// What `result` measured for `figure`; InvalidArgument naming the known
// measures when `figure` is none of kReferenceFigureNames.
absl::StatusOr<double> MeasuredFigure(std::string_view figure, const SimulationResult& result);

bool IsCapacityFigure(std::string_view figure);

// What a run measured for `figure` under `policy`: NotFound when the policy
// was not run (printed "not run"), any other error printed as its message.
using FigureMeasure =
    std::function<absl::StatusOr<double>(const std::string& policy, const std::string& figure)>;

// The Markdown table of `paper`'s figures (those of kCapacityFigureNames when
// `capacity`, the others otherwise) beside Hearth's, one row per figure:
// policy, figure, paper, Hearth, Hearth / paper, then one column per policy
// of `oracles` measuring the same figure, then the note. Empty when no
// figure is of the kind asked.
std::string ReferenceFiguresTable(const ReferenceFigures& paper, bool capacity,
                                  const std::vector<std::string>& oracles,
                                  const FigureMeasure& measure);

}  // namespace hearth

#endif  // HEARTH_SIM_REFERENCE_FIGURES_H_

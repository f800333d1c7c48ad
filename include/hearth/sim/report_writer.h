// File: hearth/sim/report_writer.h
//
// Turns the runs of one scenario (one SimulationResult per policy) into the
// artefacts people read: Markdown tables (a summary row per policy, then per
// class and per user side by side), CSV and JSON with every aggregate, and
// gnuplot PNGs (TTFT CDF per class, service per user over time, queue depth
// and throughput over time). Everything here is a pure function of the
// results, so the same runs give byte-identical text; wall-clock times are
// kept out of it on purpose.
//
// Example:
//   std::vector<hearth::PolicyRun> runs;   // {policy, RunSimulation's result} each
//   std::cout << hearth::MarkdownReport(scenario, runs);
//   absl::Status written =
//       hearth::WriteReportFiles(scenario, runs, "out/evening", /*plots=*/true);

#ifndef HEARTH_SIM_REPORT_WRITER_H_
#define HEARTH_SIM_REPORT_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/simulator.h"

namespace hearth {

struct PolicyRun {
  std::string policy;
  SimulationResult result;
};

std::string MarkdownReport(const Scenario& scenario,
                           const std::vector<PolicyRun>& runs);
std::string ResultsCsv(const std::vector<PolicyRun>& runs);
// The scenario's [paper] figures beside what the runs measured (one row per
// figure: policy, figure, paper, Hearth, Hearth / paper); empty when the
// scenario has none. MarkdownReport includes it.
std::string ReferenceFiguresMarkdown(const Scenario& scenario,
                                     const std::vector<PolicyRun>& runs);
std::string ResultsJson(const Scenario& scenario,
                        const std::vector<PolicyRun>& runs);

// Writes report.md, results.csv, results.json, the plot data and PNGs (when
// `plots` and gnuplot is on the PATH) and timeline_<policy>.json for runs
// that recorded one, into `out_dir` (created). Returns the first I/O error;
// a missing or failing gnuplot is reported as FailedPrecondition after all
// other files are written.
absl::Status WriteReportFiles(const Scenario& scenario,
                              const std::vector<PolicyRun>& runs,
                              const std::string& out_dir, bool plots);

}  // namespace hearth

#endif  // HEARTH_SIM_REPORT_WRITER_H_

// The [paper] figures beside Hearth's measurements (and each oracle's), for
// report.md and the capacity report.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hearth/sim/oracle_policy.h"
#include "hearth/sim/reference_figures.h"
#include "hearth/sim/report_writer.h"

namespace hearth {
namespace {

// A measured cell: the value, "not run", or the error's message.
std::string Cell(const absl::StatusOr<double>& v) {
  if (v.ok()) return absl::StrFormat("%.6g", *v);
  if (absl::IsNotFound(v.status())) return "not run";
  return std::string(v.status().message());
}

}  // namespace

std::string ReferenceFiguresTable(const ReferenceFigures& paper, bool capacity,
                                  const std::vector<std::string>& oracles,
                                  const FigureMeasure& measure) {
  std::string rows;
  for (const ReferenceFigure& f : paper.figures) {
    if (IsCapacityFigure(f.figure) != capacity) continue;
    const absl::StatusOr<double> v = measure(f.policy, f.figure);
    std::string ratio;
    if (v.ok()) ratio = f.value > 0 ? absl::StrFormat("%.3f", *v / f.value) : "n/a";
    absl::StrAppend(&rows, "| ", f.policy, " | ", f.figure, " | ",
                    absl::StrFormat("%.6g", f.value), " | ", Cell(v), " | ", ratio, " |");
    for (const std::string& oracle : oracles) {
      absl::StrAppend(&rows, " ", Cell(measure(oracle, f.figure)), " |");
    }
    absl::StrAppend(&rows, " ", f.note, " |\n");
  }
  if (rows.empty()) return "";
  std::string out = absl::StrCat("\nPublished figures beside Hearth's (source: ", paper.source,
                                 "):\n\n| policy | figure | paper | Hearth | Hearth / paper |");
  for (const std::string& oracle : oracles) absl::StrAppend(&out, " ", oracle, " |");
  absl::StrAppend(&out, " note |\n|---|---|---:|---:|---:|");
  for (size_t i = 0; i < oracles.size(); ++i) absl::StrAppend(&out, "---:|");
  absl::StrAppend(&out, "---|\n", rows);
  return out;
}

std::string ReferenceFiguresMarkdown(const Scenario& s, const std::vector<PolicyRun>& runs) {
  std::vector<std::string> oracles;
  for (const PolicyRun& run : runs) {
    if (IsOraclePolicy(run.policy)) oracles.push_back(run.policy);
  }
  return ReferenceFiguresTable(
      s.paper, /*capacity=*/false, oracles,
      [&](const std::string& policy, const std::string& figure) -> absl::StatusOr<double> {
        for (const PolicyRun& run : runs) {
          if (run.policy == policy) return MeasuredFigure(figure, run.result);
        }
        return absl::NotFoundError(absl::StrCat(policy, " was not run"));
      });
}

}  // namespace hearth

// The [paper] figures beside Hearth's measurements, for report.md.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hearth/sim/report_writer.h"

namespace hearth {

std::string ReferenceFiguresMarkdown(const Scenario& s, const std::vector<PolicyRun>& runs) {
  if (s.paper.figures.empty()) return "";
  std::string out = absl::StrCat(
      "\nPublished figures beside Hearth's (source: ", s.paper.source,
      "):\n\n| policy | figure | paper | Hearth | Hearth / paper | note |\n"
      "|---|---|---:|---:|---:|---|\n");
  for (const ReferenceFigure& f : s.paper.figures) {
    std::string measured = "not run";
    std::string ratio = "";
    for (const PolicyRun& run : runs) {
      if (run.policy != f.policy) continue;
      absl::StatusOr<double> v = MeasuredFigure(f.figure, run.result);
      if (!v.ok()) {
        measured = std::string(v.status().message());
        break;
      }
      measured = absl::StrFormat("%.6g", *v);
      ratio = f.value > 0 ? absl::StrFormat("%.3f", *v / f.value) : "n/a";
    }
    absl::StrAppend(&out, "| ", f.policy, " | ", f.figure, " | ",
                    absl::StrFormat("%.6g", f.value), " | ", measured, " | ", ratio, " | ",
                    f.note, " |\n");
  }
  return out;
}

}  // namespace hearth

// Files and gnuplot plots for a scenario's runs.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hearth/sim/report_writer.h"
#include "internal/status_macros.h"

namespace hearth {
namespace {

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

// File-name-safe policy name.
std::string Safe(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// TTFT CDF per class: one gnuplot data block per class (at most 400 points).
std::string CdfData(const SimulationResult& r) {
  std::string out;
  for (size_t c = 0; c < r.class_ttft.size(); ++c) {
    const std::vector<double>& s = r.class_ttft[c];
    absl::StrAppend(&out, "# class ", c, "\n");
    if (s.empty()) absl::StrAppend(&out, "nan nan\n");
    const size_t step = std::max<size_t>(1, s.size() / 400);
    for (size_t i = 0; i < s.size(); i += step) {
      absl::StrAppendFormat(&out, "%.6f %.6f\n", s[i], (i + 1.0) / s.size());
    }
    if (!s.empty()) absl::StrAppendFormat(&out, "%.6f 1\n", s.back());
    absl::StrAppend(&out, "\n\n");
  }
  return out;
}

// time, waiting, running, output tok/s since the previous point, services...
std::string SeriesData(const SimulationResult& r) {
  std::string out = "# time_s waiting running output_tok_per_s user_service...\n";
  double prev_t = 0;
  int64_t prev_out = 0;
  for (const SeriesPoint& p : r.series) {
    const double dt = p.time_s - prev_t;
    absl::StrAppendFormat(&out, "%.3f %d %d %.3f", p.time_s, p.waiting, p.running,
                          dt > 0 ? (p.output_tokens - prev_out) / dt : 0.0);
    for (double s : p.user_service) absl::StrAppendFormat(&out, " %.1f", s);
    absl::StrAppend(&out, "\n");
    prev_t = p.time_s;
    prev_out = p.output_tokens;
  }
  return out;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "''";
    else out += c;
  }
  return out + "'";
}

std::string GnuplotScript(const Scenario& s, const std::vector<PolicyRun>& runs) {
  std::string g = "set terminal pngcairo size 900,560 noenhanced\nset grid\nset key outside right\n";
  for (const PolicyRun& run : runs) {
    const std::string p = Safe(run.policy);
    absl::StrAppend(&g, "set output 'ttft_cdf_", p, ".png'\nset title ",
                    Quote(absl::StrCat(s.name, ": TTFT CDF per class (", run.policy, ")")),
                    "\nset logscale x\nset xlabel 'TTFT (s)'\nset ylabel 'fraction'\n"
                    "set yrange [0:1]\nplot ");
    for (size_t c = 0; c < s.scheduler.work_classes.size(); ++c) {
      absl::StrAppend(&g, c ? ", " : "", "'ttft_", p, ".dat' index ", c,
                      " using 1:2 with lines lw 2 title ",
                      Quote(s.scheduler.work_classes[c].name));
    }
    absl::StrAppend(&g, "\nunset logscale x\nset yrange [*:*]\n");
    absl::StrAppend(&g, "set output 'service_", p, ".png'\nset title ",
                    Quote(absl::StrCat(s.name, ": weighted service per user (", run.policy,
                                       ")")),
                    "\nset xlabel 'time (s)'\nset ylabel 'normalised weighted tokens'\nplot ");
    for (size_t u = 0; u < s.scheduler.users.size(); ++u) {
      absl::StrAppend(&g, u ? ", " : "", "'series_", p, ".dat' using 1:", 5 + u,
                      " with lines lw 2 title ", Quote(s.scheduler.users[u].name));
    }
    absl::StrAppend(&g, "\n");
  }
  const std::pair<const char*, int> overlays[] = {{"queue_depth", 2}, {"throughput", 4}};
  for (const auto& [name, col] : overlays) {
    absl::StrAppend(&g, "set output '", name, ".png'\nset title ",
                    Quote(absl::StrCat(s.name, col == 2 ? ": waiting requests"
                                                        : ": output tokens per second")),
                    "\nset xlabel 'time (s)'\nset ylabel ",
                    col == 2 ? "'waiting requests'" : "'tokens/s'", "\nplot ");
    for (size_t i = 0; i < runs.size(); ++i) {
      absl::StrAppend(&g, i ? ", " : "", "'series_", Safe(runs[i].policy), ".dat' using 1:",
                      col, " with lines lw 2 title ", Quote(runs[i].policy));
    }
    absl::StrAppend(&g, "\n");
  }
  return g;
}

}  // namespace

absl::Status WriteReportFiles(const Scenario& s, const std::vector<PolicyRun>& runs,
                              const std::string& out_dir, bool plots) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create '", out_dir, "': ", ec.message()));
  }
  HEARTH_RETURN_IF_ERROR(WriteFile(out_dir + "/report.md", MarkdownReport(s, runs)));
  HEARTH_RETURN_IF_ERROR(WriteFile(out_dir + "/results.csv", ResultsCsv(runs)));
  HEARTH_RETURN_IF_ERROR(WriteFile(out_dir + "/results.json", ResultsJson(s, runs)));
  for (const PolicyRun& run : runs) {
    const std::string p = Safe(run.policy);
    HEARTH_RETURN_IF_ERROR(WriteFile(absl::StrCat(out_dir, "/ttft_", p, ".dat"),
                                     CdfData(run.result)));
    HEARTH_RETURN_IF_ERROR(WriteFile(absl::StrCat(out_dir, "/series_", p, ".dat"),
                                     SeriesData(run.result)));
    if (!run.result.timeline_json.empty()) {
      HEARTH_RETURN_IF_ERROR(WriteFile(absl::StrCat(out_dir, "/timeline_", p, ".json"),
                                       run.result.timeline_json));
    }
  }
  if (!plots) return absl::OkStatus();
  HEARTH_RETURN_IF_ERROR(WriteFile(out_dir + "/plots.gp", GnuplotScript(s, runs)));
  // The script uses relative names, so run it from the output folder.
  const std::string cmd = absl::StrCat("cd '", out_dir, "' && gnuplot plots.gp 2>gnuplot.log");
  if (std::system(cmd.c_str()) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "gnuplot failed or is missing; see ", out_dir, "/gnuplot.log (data files are written)"));
  }
  return absl::OkStatus();
}

}  // namespace hearth

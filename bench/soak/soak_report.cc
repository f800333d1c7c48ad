#include "bench/soak/soak_report.h"

#include <algorithm>
#include <cinttypes>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hearth::bench {

namespace {

std::string RunName(const SoakReport& r) {
  return absl::StrCat(r.config.policy, " / ", ModeName(r.config.mode));
}

double Mib(int64_t kib) { return static_cast<double>(kib) / 1024.0; }

// RSS when `ended` requests had ended (the last checkpoint at or before it).
int64_t RssAt(const SoakReport& r, uint64_t ended) {
  int64_t kib = 0;
  for (const RssSample& s : r.rss) {
    if (s.ended <= ended) kib = s.rss_kib;
  }
  return kib;
}

}  // namespace

void PrintSummaryTable(const std::vector<SoakReport>& reports, bool header, std::FILE* out) {
  if (header) {
    std::fprintf(out,
                 "| policy / mode | accepted | finished | cancelled | timed out | failed | "
                 "rejected | lost | dup | unknown | leaked dev / host | invariants (checks, "
                 "fail) | preemptions | steps | wall s | RSS MiB 100k → end (peak) | verdict |\n"
                 "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
                 "---|\n");
  }
  for (const SoakReport& r : reports) {
    if (!r.setup.ok()) {
      std::fprintf(out, "| %s | setup failed: %s |\n", RunName(r).c_str(),
                   r.setup.ToString().c_str());
      continue;
    }
    const uint64_t first = std::min<uint64_t>(100'000, r.ended);
    std::fprintf(out,
                 "| %s | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64
                 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRId64
                 " / %" PRId64 " | %" PRIu64 ", %" PRIu64 " | %" PRIu64 " | %" PRIu64
                 " | %.1f | %.1f → %.1f (%.1f) | %s |\n",
                 RunName(r).c_str(), r.accepted, r.finished, r.cancelled, r.timed_out,
                 r.failed, r.rejected, r.lost, r.duplicated, r.unknown, r.leaked_device_blocks,
                 r.leaked_host_blocks, r.invariant_checks, r.invariant_failures, r.preemptions,
                 r.steps, r.wall_seconds, Mib(RssAt(r, first)), Mib(RssAt(r, r.ended)),
                 Mib(r.peak_rss_kib), SoakPassed(r) ? "pass" : "**FAIL**");
  }
}

void PrintInjectionTable(const std::vector<SoakReport>& reports, bool header, std::FILE* out) {
  if (header) {
    std::fprintf(out,
                 "| policy / mode | Submit rejections by code | invalid specs sent (accepted) | "
                 "cancels ok / not found / other | engine failures | corrupt outcomes sent / "
                 "rejected / accepted / wrong code | contract violations | prefix-hit tokens |\n"
                 "|---|---|---:|---|---:|---|---:|---:|\n");
  }
  for (const SoakReport& r : reports) {
    if (!r.setup.ok()) continue;
    std::string rejections = absl::StrJoin(
        r.submit_rejections, ", ",
        [](std::string* s, const auto& kv) { absl::StrAppend(s, kv.first, " ", kv.second); });
    if (rejections.empty()) rejections = "none";
    std::fprintf(out,
                 "| %s | %s | %" PRIu64 " (%" PRIu64 ") | %" PRIu64 " / %" PRIu64 " / %" PRIu64
                 " | %" PRIu64 " | %" PRIu64 " / %" PRIu64 " / %" PRIu64 " / %" PRIu64
                 " | %" PRIu64 " | %" PRIu64 " |\n",
                 RunName(r).c_str(), rejections.c_str(), r.invalid_specs_sent,
                 r.invalid_specs_accepted, r.cancels_ok, r.cancels_not_found, r.cancels_other,
                 r.injected_failures, r.corrupt_sent, r.corrupt_rejected, r.corrupt_accepted,
                 r.corrupt_wrong_code, r.contract_violations, r.prefix_hit_tokens);
  }
}

void PrintRssTable(const std::vector<SoakReport>& reports, std::FILE* out) {
  std::fprintf(out, "| ended |");
  for (const SoakReport& r : reports) std::fprintf(out, " %s |", RunName(r).c_str());
  std::fprintf(out, "\n|---:|");
  for (size_t i = 0; i < reports.size(); ++i) std::fprintf(out, "---:|");
  std::fprintf(out, "\n");
  size_t rows = 0;
  for (const SoakReport& r : reports) rows = std::max(rows, r.rss.size());
  for (size_t row = 0; row < rows; ++row) {
    uint64_t ended = 0;
    for (const SoakReport& r : reports) {
      if (row < r.rss.size()) ended = std::max(ended, r.rss[row].ended);
    }
    std::fprintf(out, "| %" PRIu64 " |", ended);
    for (const SoakReport& r : reports) {
      if (row < r.rss.size()) {
        std::fprintf(out, " %.1f |", Mib(r.rss[row].rss_kib));
      } else {
        std::fprintf(out, " |");
      }
    }
    std::fprintf(out, "\n");
  }
}

void PrintRssRows(const std::vector<SoakReport>& reports, bool header, std::FILE* out) {
  size_t columns = 0;
  for (const SoakReport& r : reports) columns = std::max(columns, r.rss.size());
  if (header && !reports.empty()) {
    const SoakReport& widest = *std::max_element(
        reports.begin(), reports.end(),
        [](const SoakReport& a, const SoakReport& b) { return a.rss.size() < b.rss.size(); });
    std::fprintf(out, "| RSS MiB at ended → |");
    for (const RssSample& s : widest.rss) std::fprintf(out, " %" PRIu64 " |", s.ended);
    std::fprintf(out, "\n|---|");
    for (size_t i = 0; i < columns; ++i) std::fprintf(out, "---:|");
    std::fprintf(out, "\n");
  }
  for (const SoakReport& r : reports) {
    std::fprintf(out, "| %s |", RunName(r).c_str());
    for (const RssSample& s : r.rss) std::fprintf(out, " %.1f |", Mib(s.rss_kib));
    std::fprintf(out, "\n");
  }
}

void PrintProblems(const std::vector<SoakReport>& reports, std::FILE* out) {
  for (const SoakReport& r : reports) {
    if (!r.quiescent && r.setup.ok()) {
      std::fprintf(out, "- %s: did not drain to quiescence (%" PRIu64 " still live)\n",
                   RunName(r).c_str(), r.lost);
    }
    if (!r.first_invariant_failure.empty()) {
      std::fprintf(out, "- %s: first invariant failure: %s\n", RunName(r).c_str(),
                   r.first_invariant_failure.c_str());
    }
    if (!r.first_contract_violation.empty()) {
      std::fprintf(out, "- %s: first contract violation: %s\n", RunName(r).c_str(),
                   r.first_contract_violation.c_str());
    }
  }
}

}  // namespace hearth::bench

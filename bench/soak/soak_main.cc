// The soak benchmark (issue 15): a million requests per policy and
// preemption mode through a real Scheduler, with injected engine failures,
// host cancels, corrupt outcomes and invalid specs; reports lost, duplicated
// and unknown results, leaked blocks, invariant failures and RSS.
//
//   build-rel/bench/soak/hearth_soak                       # the full matrix
//   build-rel/bench/soak/hearth_soak --policies=vtc --modes=recompute \
//       --requests=5000000                                 # RSS growth to 5M
//
// Exit status 0 when every run passed, 1 otherwise. bench/soak/run_soak.sh
// runs the matrix and the 5M run, one process per run.

#include <cinttypes>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "bench/soak/soak_config.h"
#include "bench/soak/soak_report.h"
#include "bench/soak/soak_run.h"

ABSL_FLAG(std::string, policies, "all",
          "Comma-separated policies (registry names or class-shares), or all.");
ABSL_FLAG(std::string, modes, "recompute,swap", "Comma-separated preemption modes.");
ABSL_FLAG(int64_t, requests, 1'000'000, "Requests Submit must accept per run.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the workload and of every injection.");
ABSL_FLAG(int32_t, device_blocks, 1536, "Device KV blocks (16 tokens each).");
ABSL_FLAG(int32_t, host_blocks, 4096, "Host KV blocks for swap preemption.");
ABSL_FLAG(int32_t, max_pending, 2048, "max_pending_requests; intake keeps this many live.");
ABSL_FLAG(double, cancel_per_step, 0.05, "Chance of a host cancel per step.");
ABSL_FLAG(double, corrupt_per_step, 0.01, "Chance of a corrupt outcome per step.");
ABSL_FLAG(double, failure_per_sequence, 0.0005, "Chance of an engine failure per sequence.");
ABSL_FLAG(double, invalid_spec_rate, 0.0005, "Share of deliberately invalid specs.");
ABSL_FLAG(double, overfill_per_step, 0.01, "Chance per step of a Submit beyond the limit.");
ABSL_FLAG(int64_t, invariant_every_steps, 10'000, "CheckInvariants() period in steps.");
ABSL_FLAG(int64_t, rss_every_ended, 100'000, "RSS checkpoint period in ended requests.");
ABSL_FLAG(bool, header, true, "Print table headers (false: rows only, to append).");
ABSL_FLAG(std::string, tables, "summary,injections,rss,problems",
          "Which tables to print: summary, injections, rss (a column per run), rss_rows "
          "(a row per run), problems.");
ABSL_FLAG(std::string, append_to_dir, "",
          "Append each table to DIR/<table>.md instead of printing it (a header only "
          "when the file is new), so runs in separate processes build one table.");
ABSL_FLAG(bool, list_policies, false, "Print the policies 'all' means, one a line, and exit.");

namespace hearth::bench {
namespace {

std::vector<SoakConfig> ConfigsFromFlags() {
  std::vector<std::string> policies =
      absl::StrSplit(absl::GetFlag(FLAGS_policies), ',', absl::SkipEmpty());
  if (policies.size() == 1 && policies[0] == "all") policies = SoakPolicyNames();
  const std::vector<std::string> modes =
      absl::StrSplit(absl::GetFlag(FLAGS_modes), ',', absl::SkipEmpty());
  std::vector<SoakConfig> configs;
  for (const std::string& policy : policies) {
    for (const std::string& mode : modes) {
      SoakConfig c;
      c.policy = policy;
      c.mode = mode == "swap" ? PreemptionMode::kSwap : PreemptionMode::kRecompute;
      c.requests = absl::GetFlag(FLAGS_requests);
      c.seed = absl::GetFlag(FLAGS_seed);
      c.device_blocks = absl::GetFlag(FLAGS_device_blocks);
      c.host_blocks = absl::GetFlag(FLAGS_host_blocks);
      c.max_pending = absl::GetFlag(FLAGS_max_pending);
      c.cancel_per_step = absl::GetFlag(FLAGS_cancel_per_step);
      c.corrupt_per_step = absl::GetFlag(FLAGS_corrupt_per_step);
      c.failure_per_sequence = absl::GetFlag(FLAGS_failure_per_sequence);
      c.invalid_spec_rate = absl::GetFlag(FLAGS_invalid_spec_rate);
      c.overfill_per_step = absl::GetFlag(FLAGS_overfill_per_step);
      c.invariant_every_steps = absl::GetFlag(FLAGS_invariant_every_steps);
      c.rss_every_ended = absl::GetFlag(FLAGS_rss_every_ended);
      configs.push_back(c);
    }
  }
  return configs;
}

void PrintGrowth(const std::vector<SoakReport>& reports, std::FILE* out) {
  for (const SoakReport& r : reports) {
    if (r.ended <= 1'000'000 || r.rss.empty()) continue;
    int64_t at_1m = 0;
    for (const RssSample& s : r.rss) {
      if (s.ended <= 1'000'000) at_1m = s.rss_kib;
    }
    const int64_t at_end = r.rss.back().rss_kib;
    if (at_1m <= 0) continue;
    std::fprintf(out, "\nRSS growth of %s / %s from 1,000,000 to %" PRIu64
                 " ended: %.1f → %.1f MiB (%+.1f%%)\n",
                 r.config.policy.c_str(), ModeName(r.config.mode).c_str(), r.rss.back().ended,
                 at_1m / 1024.0, at_end / 1024.0, 100.0 * (at_end - at_1m) / at_1m);
  }
}

// Prints one table to stdout, or appends it to DIR/<name>.md.
void Emit(const std::string& name, const std::function<void(bool, std::FILE*)>& print) {
  const std::string dir = absl::GetFlag(FLAGS_append_to_dir);
  if (dir.empty()) {
    std::printf("\n");
    print(absl::GetFlag(FLAGS_header), stdout);
    return;
  }
  const std::string path = dir + "/" + name + ".md";
  std::FILE* existing = std::fopen(path.c_str(), "r");
  if (existing != nullptr) std::fclose(existing);
  std::FILE* out = std::fopen(path.c_str(), "a");
  if (out == nullptr) {
    std::fprintf(stderr, "cannot append to %s\n", path.c_str());
    return;
  }
  print(existing == nullptr, out);
  std::fclose(out);
}

int Main() {
  if (absl::GetFlag(FLAGS_list_policies)) {
    for (const std::string& name : SoakPolicyNames()) std::printf("%s\n", name.c_str());
    return 0;
  }
  const std::vector<std::string> tables =
      absl::StrSplit(absl::GetFlag(FLAGS_tables), ',', absl::SkipEmpty());
  std::vector<SoakReport> reports;
  bool all_passed = true;
  for (const SoakConfig& config : ConfigsFromFlags()) {
    std::fprintf(stderr, "soak %s / %s, %" PRId64 " requests, seed %" PRIu64 " ...\n",
                 config.policy.c_str(), ModeName(config.mode).c_str(), config.requests,
                 config.seed);
    SoakReport report = RunSoak(config);
    std::fprintf(stderr, "  %s in %.1f s, %" PRIu64 " steps\n",
                 SoakPassed(report) ? "passed" : "FAILED", report.wall_seconds, report.steps);
    all_passed = all_passed && SoakPassed(report);
    reports.push_back(std::move(report));
  }
  for (const std::string& table : tables) {
    if (table == "summary") {
      Emit(table, [&](bool h, std::FILE* out) { PrintSummaryTable(reports, h, out); });
    } else if (table == "injections") {
      Emit(table, [&](bool h, std::FILE* out) { PrintInjectionTable(reports, h, out); });
    } else if (table == "rss") {
      Emit(table, [&](bool, std::FILE* out) {
        PrintRssTable(reports, out);
        PrintGrowth(reports, out);
      });
    } else if (table == "rss_rows") {
      Emit(table, [&](bool h, std::FILE* out) { PrintRssRows(reports, h, out); });
    } else if (table == "problems") {
      Emit(table, [&](bool, std::FILE* out) { PrintProblems(reports, out); });
    } else {
      std::fprintf(stderr, "unknown table %s\n", table.c_str());
      return 2;
    }
  }
  return all_passed ? 0 : 1;
}

}  // namespace
}  // namespace hearth::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return hearth::bench::Main();
}

// hearth_sim_cli: replays a scenario (TOML) through the real Hearth scheduler
// under each policy it lists and reports per user and per class.
//
//   hearth_sim_cli --config=bench/suites/household_evening_90.toml \
//                  --out=sim_out/evening
//
// Prints the Markdown tables on stdout and writes report.md, results.csv,
// results.json, plots (PNG, via gnuplot) and, with --timeline, Perfetto
// timelines (open them at ui.perfetto.dev) into --out.

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "hearth/sim/fifo_equivalence.h"
#include "hearth/sim/latency_capacity.h"
#include "hearth/sim/report_writer.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/scenario_keys.h"
#include "hearth/sim/simulator.h"
#include "progress_bar.h"
#include "load_grid_mode.h"
#include "slo_capacity.h"

ABSL_FLAG(std::string, config, "", "Scenario TOML file (required).");
ABSL_FLAG(std::string, out, "", "Output folder (default: sim_out/<scenario name>).");
ABSL_FLAG(std::string, policies, "",
          "Comma-separated policies overriding the scenario's list "
          "(fifo, vtc, priority, mlfq, household, oracle_srpt, oracle_srpt_preemptive).");
ABSL_FLAG(int64_t, seed, -1, "Overrides the scenario's seed when >= 0.");
ABSL_FLAG(bool, timeline, false, "Record a Perfetto timeline per policy.");
ABSL_FLAG(bool, plots, true, "Render PNG plots with gnuplot.");
ABSL_FLAG(bool, quiet, false, "Do not print the tables.");
ABSL_FLAG(bool, slo_capacity, false,
          "Household scenarios: bisect each policy's SLO capacity on load and print it with "
          "per-class SLO attainment at loads 0.5-1.1 (see slo_capacity.h).");
ABSL_FLAG(double, slo_target, 0.9, "--slo_capacity: share of each class that must meet its SLO.");
ABSL_FLAG(double, slo_reference_capacity, 0,
          "--slo_capacity: requests/s that load 1.0 stands for; 0 measures FIFO's saturated "
          "capacity. Pin it to compare builds whose FIFO differs on the same offered loads.");
ABSL_FLAG(std::string, slo_loads, "",
          "--slo_capacity: comma-separated loads of the attainment table (default 0.5,...,1.1).");
ABSL_FLAG(bool, print_scenario_keys, false,
          "Print the scenario keys' reference (Markdown, the generated section of "
          "bench/suites/README.md) and exit.");
ABSL_FLAG(bool, slo_bisect, true, "--slo_capacity: bisect each policy's SLO capacity.");
ABSL_FLAG(std::string, load_grid, "",
          "Comma-separated loads (fractions of FIFO's saturated capacity, e.g. 0.7,0.9,1,1.1): "
          "run every policy at each and print SLO met and preemptions against FIFO, marking "
          "cells below 0.8x FIFO's SLO met or above 2x its preemptions (see load_grid_mode.h). "
          "Any scenario kind.");
ABSL_FLAG(double, load_grid_reference_capacity, 0,
          "--load_grid: requests/s that load 1.0 stands for; 0 measures FIFO's saturated "
          "capacity.");
ABSL_FLAG(bool, capacity, false,
          "Each policy's capacity (requests/s) under the scenario's [capacity] latency "
          "criterion, once per token budget it lists, by bisection on the rate, with its "
          "[paper] capacity figures (see hearth/sim/latency_capacity.h).");
ABSL_FLAG(int32_t, load_grid_seeds, 1,
          "--load_grid: workload draws per cell (seeds seed .. seed+N-1, in [1, 64]), their "
          "counts summed, so that a preemption ratio is not judged on one draw's handful.");

namespace {

int Fail(const std::string& what) {
  std::cerr << "hearth_sim_cli: " << what << "\n";
  return 1;
}

// --help lists the flags defined in a file whose name matches the
// program's by default; this program's flags live in main.cc, which never
// does, so --help printed "No flags matched". Match this file instead
// (--helpfull still lists Abseil's own flags too).
bool IsThisFile(absl::string_view path) { return absl::EndsWith(path, "simulator/main.cc"); }

void ListOurFlagsInHelp() {
  absl::FlagsUsageConfig config;
  config.contains_help_flags = IsThisFile;
  config.contains_helpshort_flags = IsThisFile;
  config.version_string = [] { return std::string("hearth_sim_cli (Hearth simulator)\n"); };
  absl::SetFlagsUsageConfig(config);
}

// The household's calibration, when the scenario set `load`: what the
// offered rate was scaled to.
void PrintCalibration(const hearth::Scenario& s, const hearth::WorkloadCalibration& c) {
  if (s.workload.kind != hearth::WorkloadSpec::Kind::kHousehold) return;
  if (c.capacity_per_s > 0) {
    std::fprintf(stderr,
                 "%s: measured capacity %.3f requests/s (FIFO, saturated); load %.2f -> "
                 "load_scale %.4f (%.3f calls/s offered at scale 1)\n",
                 s.name.c_str(), c.capacity_per_s, s.workload.load, c.load_scale,
                 c.offered_per_s_at_unit_scale);
  } else {
    std::fprintf(stderr, "%s: load_scale %.4f (set in the scenario; %.3f calls/s at scale 1)\n",
                 s.name.c_str(), c.load_scale, c.offered_per_s_at_unit_scale);
  }
}

int PrintCapacity(const hearth::Scenario& s) {
  const absl::Time start = absl::Now();
  absl::StatusOr<hearth::LatencyCapacityResult> r = hearth::RunLatencyCapacity(
      s, [&](const std::string& policy, int32_t budget, double rate) {
        std::fprintf(stderr, "%s: %s, token budget %d, %.4g requests/s (%.0f s so far)\n",
                     s.name.c_str(), policy.c_str(), budget, rate,
                     absl::ToDoubleSeconds(absl::Now() - start));
      });
  if (!r.ok()) return Fail(std::string(r.status().message()));
  std::cout << hearth::LatencyCapacityMarkdown(s, *r);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ListOurFlagsInHelp();
  absl::SetProgramUsageMessage(
      "Simulates a Hearth scenario under several policies.\n"
      "  hearth_sim_cli --config=scenario.toml [--out=dir] [--policies=fifo,household]\n"
      "The scenario format: bench/suites/README.md; the trace formats: "
      "examples/simulator/README.md.");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_print_scenario_keys)) {
    std::cout << hearth::ScenarioKeysMarkdown();
    return 0;
  }
  const std::string config = absl::GetFlag(FLAGS_config);
  if (config.empty()) return Fail("--config is required (a scenario .toml file)");
  absl::StatusOr<hearth::Scenario> scenario = hearth::LoadScenario(config);
  if (!scenario.ok()) return Fail(std::string(scenario.status().message()));
  if (absl::GetFlag(FLAGS_seed) >= 0) {
    scenario->seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  }
  if (absl::GetFlag(FLAGS_timeline)) scenario->record_timeline = true;
  if (!absl::GetFlag(FLAGS_policies).empty()) {
    scenario->policies = absl::StrSplit(absl::GetFlag(FLAGS_policies), ',');
  }
  if (absl::GetFlag(FLAGS_slo_capacity)) {
    hearth_cli::SloCapacityOptions slo;
    slo.target = absl::GetFlag(FLAGS_slo_target);
    slo.reference_capacity_per_s = absl::GetFlag(FLAGS_slo_reference_capacity);
    if (!absl::GetFlag(FLAGS_slo_bisect)) slo.steps = 0;
    if (!absl::GetFlag(FLAGS_slo_loads).empty()) {
      absl::StatusOr<std::vector<double>> loads =
          hearth_cli::ParseLoadList("--slo_loads", absl::GetFlag(FLAGS_slo_loads));
      if (!loads.ok()) return Fail(std::string(loads.status().message()));
      slo.grid = *std::move(loads);
    }
    absl::StatusOr<std::string> report = hearth_cli::SloCapacityReport(*scenario, slo);
    if (!report.ok()) return Fail(std::string(report.status().message()));
    std::cout << *report;
    return 0;
  }
  if (absl::GetFlag(FLAGS_capacity)) return PrintCapacity(*scenario);
  if (!absl::GetFlag(FLAGS_load_grid).empty()) {
    absl::StatusOr<std::vector<double>> loads =
        hearth_cli::ParseLoadList("--load_grid", absl::GetFlag(FLAGS_load_grid));
    if (!loads.ok()) return Fail(std::string(loads.status().message()));
    absl::StatusOr<std::string> report = hearth_cli::LoadGridReport(
        *scenario, *loads, absl::GetFlag(FLAGS_load_grid_reference_capacity),
        absl::GetFlag(FLAGS_load_grid_seeds));
    if (!report.ok()) return Fail(std::string(report.status().message()));
    std::cout << *report;
    return 0;
  }
  std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) out = "sim_out/" + scenario->name;

  const absl::Time t0 = absl::Now();
  hearth::WorkloadCalibration calibration;
  absl::StatusOr<hearth::Workload> workload = hearth::BuildWorkload(*scenario, &calibration);
  if (!workload.ok()) return Fail(std::string(workload.status().message()));
  PrintCalibration(*scenario, calibration);
  for (const std::string& w : hearth::FifoEquivalenceWarnings(*scenario, *workload)) {
    std::fprintf(stderr, "%s: warning: %s\n", scenario->name.c_str(), w.c_str());
  }
  std::fprintf(stderr, "%s: %zu requests in the workload, built in %.2f s\n",
               scenario->name.c_str(), workload->requests.size(),
               absl::ToDoubleSeconds(absl::Now() - t0));

  std::vector<hearth::PolicyRun> runs;
  for (const std::string& policy : scenario->policies) {
    absl::StatusOr<hearth::SimulationOptions> options =
        hearth::SimulationOptionsFor(*scenario, policy);
    if (!options.ok()) return Fail(std::string(options.status().message()));
    hearth_cli::ProgressBar bar(policy);
    options->progress = [&bar](double f) { bar.Update(f); };
    const absl::Time start = absl::Now();
    absl::StatusOr<hearth::SimulationResult> result =
        hearth::RunSimulation(*workload, *options);
    if (!result.ok()) return Fail(policy + ": " + std::string(result.status().message()));
    std::fprintf(stderr,
                 "%-10s %8.2f s wall, %llu steps, %.0f simulated s; %llu issued, "
                 "%llu refused at submission, %llu never issued (parent unfinished)\n",
                 policy.c_str(), absl::ToDoubleSeconds(absl::Now() - start),
                 static_cast<unsigned long long>(result->steps), result->simulated_seconds,
                 static_cast<unsigned long long>(result->report.total.arrived -
                                                 result->submit_rejected),
                 static_cast<unsigned long long>(result->submit_rejected),
                 static_cast<unsigned long long>(result->dependents_dropped));
    runs.push_back({policy, *std::move(result)});
  }
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::cout << hearth::MarkdownReport(*scenario, runs);
  }
  absl::Status written =
      hearth::WriteReportFiles(*scenario, runs, out, absl::GetFlag(FLAGS_plots));
  if (!written.ok()) return Fail(std::string(written.message()));
  std::fprintf(stderr, "wrote %s/{report.md,results.csv,results.json,*.png%s}\n", out.c_str(),
               scenario->record_timeline ? ",timeline_*.json" : "");
  return 0;
}

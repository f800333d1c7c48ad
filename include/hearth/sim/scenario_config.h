// File: hearth/sim/scenario_config.h
//
// A simulation scenario read from a TOML file: the household (users and
// their weights), the work classes (priority, timeout, SLO), the policies to
// compare and their knobs, the GPU, the model, the cost model, the engine
// limits and the workload (household generator, Azure trace, ServeGen
// clients, LMCache agent sessions, Mooncake, ShareGPT-style lengths,
// BurstGPT, or Hearth's request JSONL). Relative paths are relative to the
// config file. Every error names the file, the line and the key, e.g.
//   "evening.toml:23: classes[1].timeout_s: must be > 0". The tables that
// set library options ([scheduler], [model], [[users]], [[classes]]) spell
// every key as the options schema does (hearth/scheduler/option_fields.h),
// as the C API's options JSON and hearth-serve's household file do.
// The full format, with every key and its default, is documented in
// bench/suites/README.md; the scenarios there are working examples.
//
// Example:
//   absl::StatusOr<hearth::Scenario> s = hearth::LoadScenario("evening.toml");
//   absl::StatusOr<hearth::Workload> w = hearth::BuildWorkload(*s);
//   absl::StatusOr<hearth::SimulationOptions> o =
//       hearth::SimulationOptionsFor(*s, "household");
//   absl::StatusOr<hearth::SimulationResult> r = hearth::RunSimulation(*w, *o);

#ifndef HEARTH_SIM_SCENARIO_CONFIG_H_
#define HEARTH_SIM_SCENARIO_CONFIG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/scheduler/scheduler_options.h"
#include "hearth/sim/agent_trace.h"
#include "hearth/sim/burstgpt_trace.h"
#include "hearth/sim/capacity_search.h"
#include "hearth/sim/cost_model.h"
#include "hearth/sim/gpu_catalog.h"
#include "hearth/sim/household_workload.h"
#include "hearth/sim/model_catalog.h"
#include "hearth/sim/mooncake_trace.h"
#include "hearth/sim/reference_figures.h"
#include "hearth/sim/request_jsonl.h"
#include "hearth/sim/servegen_trace.h"
#include "hearth/sim/sharegpt_lengths.h"
#include "hearth/sim/simulator.h"
#include "hearth/sim/trace_mapping.h"
#include "hearth/sim/workload.h"

namespace hearth {

// One member submitting many requests of one class, regularly spaced (the
// "flood" scenario).
struct FloodSpec {
  uint32_t user = 0;
  uint32_t work_class = 0;
  int32_t count = 0;
  absl::Duration start = absl::ZeroDuration();
  absl::Duration spacing = absl::ZeroDuration();
  LengthDistribution prompt = LengthDistribution::Uniform(8000, 32000);
  LengthDistribution output = LengthDistribution::Uniform(200, 600);
};

struct WorkloadSpec {
  enum class Kind {
    kHousehold, kAzure, kServeGen, kAgent, kMooncake, kShareGpt, kBurstGpt, kRequestJsonl
  };
  Kind kind = Kind::kHousehold;
  // kHousehold. When `load` > 0 the generator's load_scale is chosen so that
  // calls arrive at `load` x the capacity measured by a saturation run of the
  // same mix under FIFO (see BuildWorkload).
  HouseholdOptions household;
  double load = 0;
  // kAzure, kMooncake, kShareGpt, kBurstGpt (file and mapping) and
  // kRequestJsonl (file only).
  std::string trace_path;
  TraceMapping mapping;
  // kMooncake: tokens one hash id covers.
  int32_t mooncake_block_tokens = kMooncakeBlockTokens;
  // kShareGpt.
  ShareGptOptions sharegpt;
  // kBurstGpt.
  BurstGptOptions burstgpt;
  // kRequestJsonl.
  RequestJsonlOptions request_jsonl;
  // kServeGen.
  ServeGenOptions servegen;
  // kAgent.
  AgentTraceOptions agent;
  // Added to any kind.
  std::vector<FloodSpec> floods;
  // Most requests the generators and floods may produce ([workload]
  // request_cap); BuildWorkload copies it into the generator options.
  int64_t request_cap = kDefaultRequestCap;
  // "file:line: key" of the scenario entries errors from BuildWorkload are
  // about: where the workload comes from, and where its cap is set. Empty
  // for a spec built in code (errors then carry no prefix).
  std::string origin;
  std::string cap_origin;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source_file;
  // Seeds every generator BuildWorkload runs (the generator options' own
  // `seed` fields are overridden), the floods, and the simulation.
  uint64_t seed = 1;
  std::vector<std::string> policies;
  PolicyConfig policy_config;
  // Registries, KV cache and limits; policy_factory unset.
  SchedulerOptions scheduler;
  GpuSpec gpu;
  ModelSpec model;
  std::shared_ptr<const StepCostModel> cost_model;
  // Per class (same order as scheduler.work_classes).
  std::vector<absl::Duration> class_timeouts;
  // The report's targets: each class's WorkClassConfig targets as the file
  // set them (tpot_slo_s included when tpot_budget keeps it from the
  // scheduler's copy).
  std::vector<SloTarget> class_slos;
  int32_t default_max_new_tokens = 2048;
  // [engine] tpot_budget: the classes' TPOT targets also reach the scheduler
  // (WorkClassConfig::tpot_slo), which then cuts step budgets to keep them.
  // Off by default: on household_evening it cost more TTFT than it saved TPOT.
  bool tpot_budget = false;
  absl::Duration series_interval = absl::Seconds(10);
  bool record_timeline = false;
  WorkloadSpec workload;
  // [hints]: predicted output lengths passed with each request.
  OutputHintOptions output_hints;
  // [capacity]: what `hearth_sim_cli --capacity` searches for
  // (latency_capacity.h).
  CapacitySpec capacity;
  // [paper]: published figures printed beside Hearth's in the report.
  ReferenceFigures paper;
};

absl::StatusOr<Scenario> LoadScenario(const std::string& path);
// `file_name` stands for the file in errors; `base_dir` resolves relative
// paths.
absl::StatusOr<Scenario> ParseScenario(std::string_view text,
                                       const std::string& file_name,
                                       const std::string& base_dir);

// How BuildWorkload set a household's load, for reports.
struct WorkloadCalibration {
  // Requests per second FIFO finished while saturated by the household mix;
  // 0 when `load` is unset (no capacity run) or the workload is not a
  // household.
  double capacity_per_s = 0;
  // Household calls per second offered at load_scale 1.
  double offered_per_s_at_unit_scale = 0;
  // The generator's load_scale: `load` x capacity / offered when `load` is
  // set, the scenario's load_scale otherwise (0 for trace kinds).
  double load_scale = 0;
};

// Generates or reads the scenario's requests. For a household with `load`,
// first measures capacity (requests per second finished by FIFO while
// saturated) and sets the load scale; `calibration`, when not null, receives
// the figures used.
absl::StatusOr<Workload> BuildWorkload(const Scenario& scenario,
                                       WorkloadCalibration* calibration = nullptr);

// The names a scenario's `policies` may list: the registry's
// (KnownPolicyNames()) and the simulator's oracle baselines
// (OraclePolicyNames()).
std::vector<std::string_view> ScenarioPolicyNames();

// Options for one run of the scenario under `policy` (one of
// ScenarioPolicyNames()).
absl::StatusOr<SimulationOptions> SimulationOptionsFor(const Scenario& scenario,
                                                       std::string_view policy);

}  // namespace hearth

#endif  // HEARTH_SIM_SCENARIO_CONFIG_H_

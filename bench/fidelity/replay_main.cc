// hearth_fidelity_replay: one request list, run (a) by llama.cpp under Hearth
// in real time and (b) by the simulator with a fitted step-cost profile,
// under each policy; then compared step by step and request by request.
//
// Both sides use one loop (replay_driver.h) and one set of SchedulerOptions,
// sized from the llama.cpp context exactly as LlamaEngine sizes them: the only
// difference is where a step's duration comes from, the wall clock around
// llama_decode or the profile. The simulated requests get the real run's
// output lengths as their hidden lengths (the self-written models never end
// early, so these equal max_new_tokens).
//
//   hearth_fidelity_replay --model=wide --profile=wide.toml --out_dir=fidelity_out --repeats=3
//   hearth_fidelity_replay --model=wide --profile=wide.toml --sim_only   # seconds: try a workload
//
// Prints per run and policy (policies take turns, --repeats runs each):
// per-step time error (each real plan priced by the profile against its
// measured time), per-request TTFT and end-to-end latency error (median,
// p90), voice p90 TTFT real and simulated; then a summary of the runs and
// whether the simulator orders the policies as the real runs do, beyond
// their spread (policy_order.h). Writes requests.jsonl (the list, in the
// simulator's format), and per policy requests_<policy>.csv and
// steps_<policy>.csv, the first run's for the plot (replay.gp), later
// runs' in run<k>/.

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/fidelity/bench_models.h"
#include "bench/fidelity/replay_driver.h"
#include "bench/fidelity/replay_workload.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/sim/fitted_cost_model.h"
#include "hearth_llama_cpp/llama_engine.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "hearth_llama_cpp/llama_step_executor.h"

ABSL_FLAG(std::string, model, "wide", "self-written model: tiny or wide");
ABSL_FLAG(std::string, model_path, "", "where the model is written (default /tmp/hearth_fidelity_<model>.gguf)");
ABSL_FLAG(std::string, profile, "", "fitted step-cost profile (hearth_fidelity_calibrate); required");
ABSL_FLAG(std::string, policies, "fifo,household", "policies to replay under");
ABSL_FLAG(double, horizon_s, 24, "arrivals fall in [0, horizon_s)");
ABSL_FLAG(double, load, 1.0, "multiplies the arrival rates and burst sizes");
ABSL_FLAG(uint64_t, seed, 1, "seeds the request list");
ABSL_FLAG(int32_t, n_ctx, 4096, "llama.cpp KV cells = Hearth's KV blocks x block size");
ABSL_FLAG(int32_t, n_batch, 128, "llama.cpp n_batch = Hearth's token budget per step");
ABSL_FLAG(int32_t, n_seq_max, 8, "llama.cpp sequences = Hearth's max running requests");
ABSL_FLAG(int32_t, threads, 1, "llama.cpp CPU threads");
ABSL_FLAG(bool, flash_attn, true, "let llama.cpp use flash attention (as the calibration did)");
ABSL_FLAG(std::string, out_dir, "", "folder for the CSV and JSONL files (none when empty)");
ABSL_FLAG(int32_t, repeats, 3,
          "real runs per policy, taking turns between policies; the policy order is judged "
          "against their spread");
ABSL_FLAG(bool, sim_only, false,
          "only the simulator, with every output at its max_new_tokens (as the self-written "
          "models run): seconds instead of minutes, to try a workload before timing it");

namespace hearth::fidelity {
namespace {

namespace lc = llama_cpp;

// A llama.cpp context from the flags, and `policy`'s options sized from it
// exactly as LlamaEngine sizes them (so the simulated side schedules alike).
absl::StatusOr<lc::ContextPtr> SizedContext(llama_model* model, const std::string& policy,
                                            SchedulerOptions* sized) {
  lc::ContextOptions copts;
  copts.n_ctx = absl::GetFlag(FLAGS_n_ctx);
  copts.n_batch = absl::GetFlag(FLAGS_n_batch);
  copts.n_seq_max = absl::GetFlag(FLAGS_n_seq_max);
  copts.n_threads = absl::GetFlag(FLAGS_threads);
  copts.disable_flash_attention = !absl::GetFlag(FLAGS_flash_attn);
  absl::StatusOr<lc::ContextPtr> ctx = lc::CreateContext(model, copts);
  if (!ctx.ok()) return ctx.status();
  absl::StatusOr<SchedulerOptions> options = ReplaySchedulerOptions(policy);
  if (!options.ok()) return options.status();
  *sized = *std::move(options);
  if (absl::Status s = lc::SizeSchedulerForContext(ctx->get(), 0, *sized); !s.ok()) return s;
  return ctx;
}

absl::StatusOr<RunRecord> RunReal(llama_model* model, const std::string& policy,
                                  const std::vector<ReplayRequest>& list, SchedulerOptions* sized) {
  absl::StatusOr<lc::ContextPtr> ctx = SizedContext(model, policy, sized);
  if (!ctx.ok()) return ctx.status();
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(*sized);
  if (!scheduler.ok()) return scheduler.status();
  absl::StatusOr<std::unique_ptr<lc::LlamaStepExecutor>> executor =
      lc::LlamaStepExecutor::Create(ctx->get());
  if (!executor.ok()) return executor.status();
  WallClock clock;
  return Drive(**scheduler, **executor, clock, list, nullptr, {});
}

// The simulator alone, every output at its max_new_tokens (the self-written
// models never end early, so the real run would give the same lengths).
absl::Status SimulateOnly(llama_model* model, const StepCostModel& cost, const std::string& policy,
                          const std::vector<ReplayRequest>& list) {
  SchedulerOptions options;
  if (absl::StatusOr<lc::ContextPtr> ctx = SizedContext(model, policy, &options); !ctx.ok()) {
    return ctx.status();
  }
  std::vector<int32_t> lengths;
  for (const ReplayRequest& r : list) lengths.push_back(r.max_new_tokens);
  absl::StatusOr<RunRecord> sim = RunSimulated(options, cost, list, lengths);
  if (!sim.ok()) return sim.status();
  std::printf("policy %s (simulated): %.2f s in %zu steps, %llu preemptions\n", policy.c_str(),
              sim->seconds, sim->steps.size(),
              static_cast<unsigned long long>(sim->preemptions));
  for (const std::string& c : ReplayClasses()) {
    std::printf("  %-6s TTFT p50 %.3f s, p90 %.3f s\n", c.c_str(),
                ClassTtftQuantile(sim->requests, c, 0.5), ClassTtftQuantile(sim->requests, c, 0.9));
  }
  return absl::OkStatus();
}

absl::StatusOr<PolicyOutcome> ReplayPolicy(llama_model* model, const StepCostModel& cost,
                                           const std::string& policy,
                                           const std::vector<ReplayRequest>& list,
                                           const std::string& out_dir) {
  SchedulerOptions options;
  absl::StatusOr<RunRecord> real = RunReal(model, policy, list, &options);
  if (!real.ok()) return real.status();
  absl::StatusOr<RunRecord> sim = RunSimulated(options, cost, list, real->output_tokens);
  if (!sim.ok()) return sim.status();
  return CompareAndReport(policy, list, *real, *sim, cost, out_dir);
}

// The first run's CSVs go to --out_dir itself (the plot reads them), a later
// run's to run<k>/ under it, to look into a run whose errors stand out.
absl::StatusOr<std::string> RunDir(int32_t run) {
  const std::string out = absl::GetFlag(FLAGS_out_dir);
  if (out.empty() || run == 1) return out;
  const std::string dir = absl::StrCat(out, "/run", run);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", error.message()));
  return dir;
}

absl::Status Run() {
  if (absl::GetFlag(FLAGS_profile).empty()) return absl::InvalidArgumentError("--profile is required");
  const int32_t repeats = absl::GetFlag(FLAGS_repeats);
  if (repeats < 1 || repeats > 100) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--repeats is %d; must be in [1, 100]", repeats));
  }
  absl::StatusOr<std::unique_ptr<FittedCostModel>> cost =
      FittedCostModel::LoadProfile(absl::GetFlag(FLAGS_profile));
  if (!cost.ok()) return cost.status();
  ReplayWorkloadOptions wo;
  wo.horizon_s = absl::GetFlag(FLAGS_horizon_s);
  wo.load = absl::GetFlag(FLAGS_load);
  wo.seed = absl::GetFlag(FLAGS_seed);
  absl::StatusOr<std::vector<ReplayRequest>> list = MakeReplayWorkload(wo);
  if (!list.ok()) return list.status();
  const std::string name = absl::GetFlag(FLAGS_model);
  std::string path = absl::GetFlag(FLAGS_model_path);
  if (path.empty()) path = absl::StrCat("/tmp/hearth_fidelity_", name, ".gguf");
  if (absl::Status s = WriteNamedModel(name, path); !s.ok()) return s;
  lc::SetLlamaLogging(false);
  if (absl::Status s = lc::LoadLlamaBackends(""); !s.ok()) return s;
  absl::StatusOr<lc::ModelPtr> model = lc::LoadModel(path);
  if (!model.ok()) return model.status();
  std::printf("model %s; profile %s (%s); %zu requests over %.1f s\n", name.c_str(),
              absl::GetFlag(FLAGS_profile).c_str(), (*cost)->Describe().c_str(), list->size(),
              wo.horizon_s);
  std::vector<std::string> policies;
  for (absl::string_view policy : absl::StrSplit(absl::GetFlag(FLAGS_policies), ',')) {
    if (absl::StatusOr<PolicyFactory> f = MakePolicyFactory(std::string(policy), PolicyConfig{});
        !f.ok()) {
      return f.status();
    }
    policies.emplace_back(policy);
  }
  if (absl::GetFlag(FLAGS_sim_only)) {
    for (const std::string& policy : policies) {
      if (absl::Status s = SimulateOnly(model->get(), **cost, policy, *list); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  // Policies take turns run by run, so a change in the machine's load
  // between runs falls on both rather than on one policy's runs.
  std::vector<PolicyOutcome> outcomes;
  for (int32_t run = 1; run <= repeats; ++run) {
    for (const std::string& policy : policies) {
      std::printf("\n=== run %d of %d, policy %s\n", run, repeats, policy.c_str());
      absl::StatusOr<std::string> dir = RunDir(run);
      if (!dir.ok()) return dir.status();
      absl::StatusOr<PolicyOutcome> o = ReplayPolicy(model->get(), **cost, policy, *list, *dir);
      if (!o.ok()) return o.status();
      outcomes.push_back(*o);
      std::fflush(stdout);
    }
  }
  PrintSummary(outcomes);
  absl::StatusOr<bool> same = PrintOrdering(outcomes);
  if (!same.ok()) return same.status();
  return absl::OkStatus();
}

}  // namespace
}  // namespace hearth::fidelity

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = hearth::fidelity::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "hearth_fidelity_replay: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

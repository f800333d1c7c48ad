// hearth_gpu_replay: the fidelity replay (bench/fidelity) on the CUDA
// executor. The replay request list, scaled up by --load for a GPU, runs
// (a) on the CUDA executor under Hearth in real time and (b) in the
// simulator with the profile hearth_gpu_calibrate wrote, under each policy;
// prints the per-step, per-request TTFT and end-to-end errors and whether
// the simulator orders the policies' voice p90 TTFT as the GPU does.
// Exit status 2 when there is no usable GPU (SKIPPED).
//
//   hearth_gpu_replay --profile=h200_llama8b.toml --out_dir=results/replay

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"
#include "bench/fidelity/replay_driver.h"
#include "bench/fidelity/replay_workload.h"
#include "gpu_bench_util.h"
#include "hearth/exec/cuda_executor.h"
#include "hearth/sim/fitted_cost_model.h"

ABSL_FLAG(std::string, profile, "", "fitted profile from hearth_gpu_calibrate; required");
ABSL_FLAG(std::string, policies, "fifo,household", "policies to replay under");
ABSL_FLAG(double, horizon_s, 30, "arrivals fall in [0, horizon_s)");
ABSL_FLAG(double, load, 8, "multiplies the list's arrival rates and bursts (a GPU is fast)");
ABSL_FLAG(uint64_t, seed, 1, "seeds the request list");
ABSL_FLAG(double, kv_gib, 40, "GiB of device memory for the KV pool");
ABSL_FLAG(int32_t, max_batched_tokens, 512, "Hearth's token budget per step");
ABSL_FLAG(int32_t, max_running, 64, "Hearth's most running requests");
ABSL_FLAG(std::string, out_dir, "", "folder for the CSV and JSONL files (none when empty)");

namespace hearth {
namespace {

CudaExecutorOptions ExecutorOptions() {
  CudaExecutorOptions o;
  o.model = Llama31_8BShape();
  o.kv.block_size = 16;
  const int64_t block_bytes = KvBytesPerToken(o.model) * o.kv.block_size;
  o.kv.num_device_blocks =
      static_cast<int32_t>(absl::GetFlag(FLAGS_kv_gib) * (1ll << 30) / block_bytes);
  o.kv.max_positions = 8192;
  o.max_batched_tokens = absl::GetFlag(FLAGS_max_batched_tokens);
  o.max_sequences = absl::GetFlag(FLAGS_max_running);
  return o;
}

// The scheduler sized to the executor, as a host engine would.
absl::StatusOr<SchedulerOptions> SizedOptions(const std::string& policy,
                                              const CudaExecutorOptions& e) {
  absl::StatusOr<SchedulerOptions> o = fidelity::ReplaySchedulerOptions(policy);
  if (!o.ok()) return o.status();
  o->kv.block_size = e.kv.block_size;
  o->kv.num_device_blocks = e.kv.num_device_blocks;
  o->kv.num_host_blocks = 0;
  o->kv.enable_prefix_caching = false;
  o->preemption_mode = PreemptionMode::kRecompute;
  o->max_batched_tokens = e.max_batched_tokens;
  o->max_running = e.max_sequences;
  ModelConfig m;
  m.name = "llama-3.1-8b-shape";
  m.context_length = e.kv.max_positions;
  m.vocab_size = e.model.vocab_size;
  m.kv_bytes_per_token = KvBytesPerToken(e.model);
  o->models = {m};
  return o;
}

absl::StatusOr<fidelity::PolicyOutcome> ReplayPolicy(const std::string& policy,
                                                     const StepCostModel& cost,
                                                     const std::vector<fidelity::ReplayRequest>& list) {
  const CudaExecutorOptions eo = ExecutorOptions();
  absl::StatusOr<SchedulerOptions> options = SizedOptions(policy, eo);
  if (!options.ok()) return options.status();
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(*options);
  if (!scheduler.ok()) return scheduler.status();
  absl::StatusOr<std::unique_ptr<CudaExecutor>> executor = CudaExecutor::Create(eo);
  if (!executor.ok()) return executor.status();
  fidelity::WallClock wall;
  absl::StatusOr<fidelity::RunRecord> real =
      fidelity::Drive(**scheduler, **executor, wall, list, nullptr, {});
  if (!real.ok()) return real.status();
  absl::StatusOr<fidelity::RunRecord> sim =
      fidelity::RunSimulated(*options, cost, list, real->output_tokens);
  if (!sim.ok()) return sim.status();
  return fidelity::CompareAndReport(policy, list, *real, *sim, cost, absl::GetFlag(FLAGS_out_dir));
}

int Run() {
  absl::StatusOr<CudaDeviceInfo> info = GetCudaDeviceInfo(0);
  if (!info.ok()) {
    std::printf("SKIPPED: %s\n", info.status().ToString().c_str());
    return gpu_bench::kExitNoGpu;
  }
  absl::StatusOr<std::unique_ptr<FittedCostModel>> cost =
      FittedCostModel::LoadProfile(absl::GetFlag(FLAGS_profile));
  if (!cost.ok()) {
    std::fprintf(stderr, "--profile: %s\n", cost.status().ToString().c_str());
    return 1;
  }
  fidelity::ReplayWorkloadOptions wo;
  wo.horizon_s = absl::GetFlag(FLAGS_horizon_s);
  wo.load = absl::GetFlag(FLAGS_load);
  wo.seed = absl::GetFlag(FLAGS_seed);
  absl::StatusOr<std::vector<fidelity::ReplayRequest>> list = fidelity::MakeReplayWorkload(wo);
  if (!list.ok()) {
    std::fprintf(stderr, "%s\n", list.status().ToString().c_str());
    return 1;
  }
  std::printf("device %s; %zu requests over %.0f s; profile %s\n", info->name.c_str(),
              list->size(), wo.horizon_s, (*cost)->Describe().c_str());
  std::vector<fidelity::PolicyOutcome> outcomes;
  for (absl::string_view policy : absl::StrSplit(absl::GetFlag(FLAGS_policies), ',')) {
    absl::StatusOr<fidelity::PolicyOutcome> o = ReplayPolicy(std::string(policy), **cost, *list);
    if (!o.ok()) {
      std::fprintf(stderr, "policy %s: %s\n", std::string(policy).c_str(),
                   o.status().ToString().c_str());
      return 1;
    }
    outcomes.push_back(*o);
    std::fflush(stdout);
  }
  fidelity::PrintSummary(outcomes);
  if (absl::StatusOr<bool> same = fidelity::PrintOrdering(outcomes); !same.ok()) {
    std::fprintf(stderr, "%s\n", same.status().ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace hearth

int main(int argc, char** argv) {
  if (!hearth::gpu_bench::ParseFlags(argc, argv)) return 1;
  return hearth::Run();
}

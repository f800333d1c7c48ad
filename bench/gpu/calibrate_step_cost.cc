// Calibrates the simulator's fitted cost model on the CUDA executor: runs the
// Llama-3.1-8B shape (bf16, random weights) over a grid of step compositions
// (prefill chunk tokens and its start, decode batch, decode context), times
// each step end to end (Execute() returns after the device finished), fits
//   time = c0 + c1*P + c2*P^2 + c3*D + c4*K
// on three quarters of the grid and reports the relative error on the held-out
// quarter, then writes the profile FittedCostModel::LoadProfile() reads.
//
//   hearth_gpu_calibrate --profile=h200_llama8b.toml [--points=points.csv]
//                        [--kv_gib=80] [--quick]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "exec/step_cost_fit.h"
#include "gpu_bench_util.h"
#include "hearth/exec/cuda_executor.h"

ABSL_FLAG(std::string, profile, "", "Where to write the fitted profile TOML (none when empty).");
ABSL_FLAG(std::string, points, "", "Where to write every timed composition as CSV.");
ABSL_FLAG(double, kv_gib, 80, "GiB of device memory for the KV pool.");
ABSL_FLAG(bool, quick, false, "Time a smaller grid.");

namespace hearth {
namespace {

using exec_internal::StepCostSample;

struct Composition {
  int32_t prefill = 0;        // P: tokens of the one prefill chunk
  int32_t prefill_start = 0;  // positions already cached before the chunk
  int32_t decodes = 0;        // D
  int32_t context = 0;        // cached positions of each decode sequence
  int64_t Tokens() const {    // KV positions the step touches
    return int64_t{decodes} * (context + 1) + (prefill > 0 ? prefill_start + prefill : 0);
  }
};

std::vector<Composition> Grid(bool quick, int64_t pool_tokens) {
  std::vector<Composition> g;
  const std::vector<int32_t> prefills = quick ? std::vector<int32_t>{0, 64, 512, 2048}
                                              : std::vector<int32_t>{0, 16, 64, 128, 256, 512, 1024, 2048};
  const std::vector<int32_t> batches = quick ? std::vector<int32_t>{0, 1, 16, 128}
                                             : std::vector<int32_t>{0, 1, 4, 16, 64, 128, 256};
  const std::vector<int32_t> contexts = {256, 1024, 4096};
  for (int32_t p : prefills) {
    for (int32_t start : {0, 2048}) {
      if (p == 0 && start > 0) continue;
      for (int32_t b : batches) {
        for (int32_t c : contexts) {
          if (p == 0 && b == 0) continue;
          if (b == 0 && c != contexts[0]) continue;
          Composition x{p, start, b, b == 0 ? 0 : c};
          // Leave room so sequences of one step never share a block.
          if (x.Tokens() + 16 * (b + 1) <= pool_tokens) g.push_back(x);
        }
      }
    }
  }
  return g;
}

// Builds one step's plan with fresh request ids and private blocks; the
// previous step's requests are released in it.
class StepMaker {
 public:
  StepMaker(int32_t block_size, int32_t num_blocks, int32_t vocab)
      : bs_(block_size), blocks_(num_blocks), vocab_(vocab) {}

  const StepPlan& Make(const Composition& c) {
    plan_ = StepPlan();
    tables_.clear();
    tokens_.clear();
    plan_.step = ++step_;
    for (RequestId id : live_) plan_.released.push_back({id});
    live_.clear();
    for (int32_t i = 0; i < c.decodes; ++i) Add(c.context, 1);
    if (c.prefill > 0) Add(c.prefill_start, c.prefill);
    return plan_;
  }

 private:
  void Add(int32_t start, int32_t n) {
    const int32_t pages = (start + n + bs_ - 1) / bs_;
    std::vector<BlockId>& t = tables_.emplace_back();
    for (int32_t j = 0; j < pages; ++j) {
      t.push_back(BlockId(static_cast<uint32_t>(cursor_)));
      cursor_ = (cursor_ + 1) % blocks_;
    }
    std::vector<TokenId>& tok = tokens_.emplace_back();
    for (int32_t j = 0; j < n; ++j) tok.push_back(static_cast<TokenId>((next_id_ * 7919 + j * 104729) % vocab_));
    ScheduledSequence s;
    s.id = RequestId(next_id_++);
    s.model = ModelId(0);
    s.start_position = start;
    s.num_tokens = n;
    s.sample = true;
    s.decode = n == 1;  // the synthetic decodes; prefill chunks are longer
    s.full_block_table = true;
    s.block_table = t;
    s.new_blocks = t;
    s.token_ids = tok;
    plan_.sequences.push_back(s);
    plan_.num_batched_tokens += n;
    if (s.decode) ++plan_.num_decodes;
    live_.push_back(s.id);
  }

  int32_t bs_, blocks_, vocab_;
  int64_t cursor_ = 0;
  uint64_t next_id_ = 1, step_ = 0;
  StepPlan plan_;
  std::deque<std::vector<BlockId>> tables_;
  std::deque<std::vector<TokenId>> tokens_;
  std::vector<RequestId> live_;
};

absl::StatusOr<double> TimeStep(StepExecutor& e, StepMaker& maker, const Composition& c) {
  StepOutcome out;
  const StepPlan& plan = maker.Make(c);
  const auto t0 = std::chrono::steady_clock::now();
  absl::Status s = e.Execute(plan, &out);
  const auto t1 = std::chrono::steady_clock::now();
  if (!s.ok()) return s;
  for (const SequenceOutcome& o : out.sequences) {
    if (!o.error.empty()) return absl::InternalError(o.error);
  }
  return std::chrono::duration<double>(t1 - t0).count();
}

CudaExecutorOptions ExecutorOptions(double kv_gib) {
  CudaExecutorOptions o;
  o.model = Llama31_8BShape();
  o.kv.block_size = 16;
  const int64_t block_bytes = KvBytesPerToken(o.model) * o.kv.block_size;
  o.kv.num_device_blocks = static_cast<int32_t>(kv_gib * (1ll << 30) / block_bytes);
  o.kv.max_positions = 8192;
  o.max_batched_tokens = 2048 + 256 + 16;
  o.max_sequences = 264;
  return o;
}

struct Timings {
  std::vector<StepCostSample> train, held, all;  // `all` in grid order
  std::vector<bool> is_held;
};

// Each composition's second-fastest of three timed steps after a warm-up.
absl::StatusOr<Timings> TimeGrid(CudaExecutor& e, const CudaExecutorOptions& o,
                                 const std::vector<Composition>& grid) {
  StepMaker maker(o.kv.block_size, o.kv.num_device_blocks, o.model.vocab_size);
  Timings out;
  for (size_t i = 0; i < grid.size(); ++i) {
    const Composition& c = grid[i];
    std::vector<double> times;
    for (int rep = 0; rep < 4; ++rep) {
      absl::StatusOr<double> t = TimeStep(e, maker, c);
      if (!t.ok()) {
        return absl::Status(t.status().code(),
                            absl::StrFormat("step P=%d D=%d C=%d: %s", c.prefill, c.decodes,
                                            c.context, t.status().ToString()));
      }
      if (rep > 0) times.push_back(*t);  // the first is a warm-up
    }
    std::sort(times.begin(), times.end());
    StepCostSample s{.prefill_tokens = double(c.prefill),
                     .decode_seqs = double(c.decodes),
                     .kv_context = double(c.Tokens()),
                     .seconds = times[1]};
    // A quarter of the compositions, picked by a hash of the index so that
    // every region of the grid has some, is held out of the fit.
    const bool heldout = ((i * 2654435761ull) >> 7) % 4 == 0;
    (heldout ? out.held : out.train).push_back(s);
    out.all.push_back(s);
    out.is_held.push_back(heldout);
  }
  return out;
}

std::string PointsCsv(const std::vector<Composition>& grid, const Timings& t,
                      const exec_internal::StepCostFit& fit) {
  std::string csv = "prefill,prefill_start,decodes,context,P,D,K,seconds,predicted,heldout\n";
  for (size_t i = 0; i < grid.size(); ++i) {
    const Composition& c = grid[i];
    const StepCostSample& s = t.all[i];
    csv += absl::StrFormat("%d,%d,%d,%d,%g,%g,%g,%.9g,%.9g,%d\n", c.prefill,
                           c.prefill_start, c.decodes, c.context, s.prefill_tokens,
                           s.decode_seqs, s.kv_context, s.seconds, fit.Predict(s),
                           t.is_held[i] ? 1 : 0);
  }
  return csv;
}

// Prints the fit and its errors; returns the profile text.
std::string ReportFit(const CudaDeviceInfo& info, const Timings& t,
                      const exec_internal::StepCostFit& fit) {
  const auto train_err = exec_internal::FitError(fit, t.train);
  const auto held_err = exec_internal::FitError(fit, t.held);
  std::printf("%zu compositions (%zu fitted, %zu held out)\n", t.all.size(), t.train.size(),
              t.held.size());
  std::printf("c0=%.4g c1=%.4g c2=%.4g c3=%.4g c4=%.4g\n", fit.c[0], fit.c[1],
              fit.c[2], fit.c[3], fit.c[4]);
  std::printf("fit error: mean %.1f%% max %.1f%%; held-out: mean %.1f%% max %.1f%% (target <= 10%%)\n",
              100 * train_err.mean, 100 * train_err.max, 100 * held_err.mean, 100 * held_err.max);
  exec_internal::ProfileInfo p;
  p.gpu = info.name;
  p.model = "Llama-3.1-8B shape (bf16, random weights)";
  p.comments = {
      "Produced by hearth_gpu_calibrate (bench/gpu) on the CUDA executor.",
      absl::StrFormat("%zu step compositions, %zu held out: mean error %.1f%%, max %.1f%%.",
                      t.all.size(), t.held.size(), 100 * held_err.mean, 100 * held_err.max),
      "Step time = Execute() wall time, host preparation and transfers included."};
  absl::StatusOr<double> h2d = MeasureHostToDeviceBandwidth(int64_t{256} << 20, 10);
  absl::StatusOr<double> copy = MeasureDeviceCopyBandwidth(int64_t{1} << 30, 10);
  if (h2d.ok()) p.host_link_bandwidth = *h2d;
  if (copy.ok()) p.memory_bandwidth = *copy;
  const std::string profile = exec_internal::FormatStepCostProfile(fit, p);
  std::printf("%s", profile.c_str());
  return profile;
}

int Run() {
  absl::StatusOr<CudaDeviceInfo> info = GetCudaDeviceInfo(0);
  if (!info.ok()) {
    std::printf("SKIPPED: %s\n", info.status().ToString().c_str());
    return gpu_bench::kExitNoGpu;
  }
  const CudaExecutorOptions o = ExecutorOptions(absl::GetFlag(FLAGS_kv_gib));
  absl::StatusOr<std::unique_ptr<CudaExecutor>> e = CudaExecutor::Create(o);
  if (!e.ok()) {
    std::fprintf(stderr, "CudaExecutor::Create: %s\n", e.status().ToString().c_str());
    return 1;
  }
  std::printf("device %s; executor holds %.1f GiB (KV pool %d blocks of %lld bytes)\n",
              info->name.c_str(), (*e)->device_bytes() / double(1ll << 30),
              o.kv.num_device_blocks,
              static_cast<long long>(KvBytesPerToken(o.model) * o.kv.block_size));
  const std::vector<Composition> grid = Grid(
      absl::GetFlag(FLAGS_quick), int64_t{o.kv.num_device_blocks} * o.kv.block_size);
  absl::StatusOr<Timings> timings = TimeGrid(**e, o, grid);
  if (!timings.ok()) {
    std::fprintf(stderr, "%s\n", std::string(timings.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<exec_internal::StepCostFit> fit = exec_internal::FitStepCost(timings->train);
  if (!fit.ok()) {
    std::fprintf(stderr, "fit: %s\n", fit.status().ToString().c_str());
    return 1;
  }
  const std::string profile = ReportFit(*info, *timings, *fit);
  bool ok = gpu_bench::WriteFile(absl::GetFlag(FLAGS_profile), profile);
  ok = gpu_bench::WriteFile(absl::GetFlag(FLAGS_points), PointsCsv(grid, *timings, *fit)) && ok;
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace hearth

int main(int argc, char** argv) {
  if (!hearth::gpu_bench::ParseFlags(argc, argv)) return 1;
  return hearth::Run();
}

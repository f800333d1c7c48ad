// hearth_fidelity_calibrate: fits the simulator's step-cost profile
// (hearth/sim/fitted_cost_model.h) to real llama_decode() steps on the CPU.
//
// A step composition is D decode sequences with C cached positions each,
// plus one prefill chunk of P tokens after S cached positions, in one batch,
// logits read where the engine samples (each decode, the chunk's last
// token). Decode sequences of one (D, C) group are prefilled once, untimed;
// each timed step is rolled back with llama_memory_seq_rm so the next repeat
// finds the same cells. The machine is shared, so every composition is timed
// --reps times in each of --rounds rounds, and each round visits the groups
// and their compositions in a new shuffled order: a burst of someone else's
// load then lands on different compositions, and the median over all
// samples drops it. The fit (exec/step_cost_fit.h) uses the medians of three
// quarters of the grid; the quarter held out reports the error. With
// --batch_buckets (default 8) the per-iteration cost is fitted per token
// count up to that many (base_by_tokens): llama.cpp's CPU backend runs a
// lone decode as matrix-vector products and two or more as matrix-matrix
// ones, at three times the cost, which no linear term follows.
//
//   hearth_fidelity_calibrate --model=wide --profile=wide.toml --points=wide.csv
//
// Output: a table per composition (median, spread, prediction), the fit,
// the held-out error, and the profile text.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/fidelity/bench_models.h"
#include "bench/fidelity/fidelity_stats.h"
#include "exec/step_cost_fit.h"
#include "hearth_llama_cpp/llama_runtime.h"

ABSL_FLAG(std::string, model, "wide", "self-written model to calibrate: tiny or wide");
ABSL_FLAG(std::string, model_path, "", "where the model is written (default /tmp/hearth_fidelity_<model>.gguf)");
ABSL_FLAG(std::string, profile, "", "where to write the fitted profile TOML (none when empty)");
ABSL_FLAG(std::string, points, "", "where to write every composition as CSV (none when empty)");
ABSL_FLAG(int32_t, rounds, 5, "rounds over the whole grid, each in a new shuffled order");
ABSL_FLAG(int32_t, reps, 3, "back-to-back timings of a composition per round");
ABSL_FLAG(int32_t, n_ctx, 4096, "llama.cpp KV cells (the replay's context uses the same)");
ABSL_FLAG(int32_t, n_batch, 128, "llama.cpp n_batch: largest step in tokens");
ABSL_FLAG(int32_t, threads, 1, "llama.cpp CPU threads (more than free cores makes barriers spin)");
ABSL_FLAG(bool, quick, false, "a smaller grid (for a smoke run)");
ABSL_FLAG(bool, flash_attn, true, "let llama.cpp use flash attention (its default); the replay must match");
ABSL_FLAG(uint64_t, seed, 1, "seeds the visiting order");
ABSL_FLAG(int32_t, batch_buckets, 8,
          "fit the per-iteration cost per token count 1..N-1 and one for N or more "
          "(base_by_tokens); 0: one constant c0, the linear model");

namespace hearth::fidelity {
namespace {

namespace lc = llama_cpp;
using exec_internal::StepCostSample;

struct Composition {
  int32_t decodes = 0;        // D
  int32_t context = 0;        // C: cached positions of each decode sequence
  int32_t prefill = 0;        // P
  int32_t prefill_start = 0;  // S
  StepCostSample Features() const {
    StepCostSample s;
    s.prefill_tokens = prefill;
    s.decode_seqs = decodes;
    s.kv_context = double(decodes) * (context + 1) + (prefill > 0 ? prefill_start + prefill : 0);
    return s;
  }
};

// Nested-loop order, so IsHeldOut() spreads the held-out quarter over it.
// Decode-only steps get a grid of their own, denser in D and C: an engine
// runs mostly those (84% of the wide replay's steps), and they are the
// shortest, so the relative error the fit minimises is most sensitive there.
std::vector<Composition> Grid(bool quick, int32_t n_batch) {
  const std::vector<int32_t> decodes = quick ? std::vector<int32_t>{0, 2, 8}
                                             : std::vector<int32_t>{0, 1, 2, 4, 8};
  const std::vector<int32_t> contexts = quick ? std::vector<int32_t>{32, 256}
                                              : std::vector<int32_t>{24, 128, 320};
  const std::vector<int32_t> prefills = quick ? std::vector<int32_t>{16, 96}
                                              : std::vector<int32_t>{8, 32, 64, 120};
  const std::vector<int32_t> starts = {0, 192};
  // Every decode batch up to eight: a token count without samples would be
  // interpolated in the fit by token count.
  const std::vector<int32_t> decode_only_d = quick ? std::vector<int32_t>{1, 2, 4, 8}
                                                   : std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<int32_t> decode_only_c = quick ? std::vector<int32_t>{32, 256}
                                                   : std::vector<int32_t>{24, 64, 128, 192, 320};
  std::vector<Composition> g;
  for (int32_t d : decode_only_d) {
    for (int32_t c : decode_only_c) {
      if (d <= n_batch) g.push_back({d, c, 0, 0});
    }
  }
  for (int32_t d : decodes) {
    for (int32_t c : contexts) {
      if (d == 0 && c != contexts[0]) continue;  // C means nothing without decodes
      for (int32_t p : prefills) {
        for (int32_t s : starts) {
          if (d + p <= n_batch) g.push_back({d, d == 0 ? 0 : c, p, s});
        }
      }
    }
  }
  return g;
}

int32_t TokenAt(int32_t seq, int32_t pos) { return (seq * 31 + pos * 7) % 200 + 20; }

// Builds and runs llama batches for the compositions of one (D, C) group.
class StepTimer {
 public:
  StepTimer(llama_context* ctx, int32_t n_batch)
      : ctx_(ctx), n_batch_(n_batch), batch_(llama_batch_init(n_batch, 0, 1)) {}
  ~StepTimer() { llama_batch_free(batch_); }
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;

  // Empties the KV cache and prefills D sequences of C positions (untimed).
  absl::Status SetUpDecodes(int32_t decodes, int32_t context) {
    llama_memory_clear(llama_get_memory(ctx_), true);
    for (int32_t seq = 0; seq < decodes; ++seq) {
      if (absl::Status s = Prefill(seq, 0, context); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // Times `c` `reps` times (its decode group must be set up), appending
  // seconds to `samples`; leaves the cache as it found it.
  absl::Status Time(const Composition& c, int32_t reps, std::vector<double>& samples) {
    const llama_seq_id chunk_seq = c.decodes;
    if (c.prefill > 0 && c.prefill_start > 0) {
      if (absl::Status s = Prefill(chunk_seq, 0, c.prefill_start); !s.ok()) return s;
    }
    llama_memory_t mem = llama_get_memory(ctx_);
    for (int32_t r = 0; r < reps; ++r) {
      batch_.n_tokens = 0;
      for (int32_t seq = 0; seq < c.decodes; ++seq) Add(seq, c.context, true);
      for (int32_t k = 0; k < c.prefill; ++k) {
        Add(chunk_seq, c.prefill_start + k, k + 1 == c.prefill);
      }
      const auto t0 = std::chrono::steady_clock::now();
      const int32_t rc = llama_decode(ctx_, batch_);
      const auto t1 = std::chrono::steady_clock::now();
      if (rc != 0) return absl::InternalError(absl::StrCat("llama_decode returned ", rc));
      samples.push_back(std::chrono::duration<double>(t1 - t0).count());
      for (int32_t seq = 0; seq < c.decodes; ++seq) llama_memory_seq_rm(mem, seq, c.context, -1);
      llama_memory_seq_rm(mem, chunk_seq, c.prefill_start, -1);
    }
    llama_memory_seq_rm(mem, chunk_seq, -1, -1);
    return absl::OkStatus();
  }

 private:
  void Add(llama_seq_id seq, int32_t pos, bool logits) {
    const int32_t j = batch_.n_tokens++;
    batch_.token[j] = TokenAt(seq, pos);
    batch_.pos[j] = pos;
    batch_.n_seq_id[j] = 1;
    batch_.seq_id[j][0] = seq;
    batch_.logits[j] = logits;
  }
  absl::Status Prefill(llama_seq_id seq, int32_t from, int32_t to) {
    for (int32_t begin = from; begin < to; begin += n_batch_) {
      batch_.n_tokens = 0;
      for (int32_t p = begin; p < std::min(to, begin + n_batch_); ++p) Add(seq, p, false);
      if (const int32_t rc = llama_decode(ctx_, batch_); rc != 0) {
        return absl::InternalError(absl::StrCat("set-up llama_decode returned ", rc));
      }
    }
    return absl::OkStatus();
  }

  llama_context* ctx_;
  int32_t n_batch_;
  llama_batch batch_;
};

// Every composition's samples, over all rounds.
absl::StatusOr<std::vector<std::vector<double>>> TimeGrid(llama_context* ctx,
                                                          const std::vector<Composition>& grid) {
  std::map<std::pair<int32_t, int32_t>, std::vector<size_t>> groups;
  for (size_t i = 0; i < grid.size(); ++i) groups[{grid[i].decodes, grid[i].context}].push_back(i);
  std::vector<std::vector<size_t>> order;
  for (auto& [key, members] : groups) order.push_back(members);
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  StepTimer timer(ctx, absl::GetFlag(FLAGS_n_batch));
  std::vector<std::vector<double>> samples(grid.size());
  const int32_t rounds = absl::GetFlag(FLAGS_rounds);
  for (int32_t round = 0; round < rounds; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    for (std::vector<size_t>& members : order) {
      std::shuffle(members.begin(), members.end(), rng);
      const Composition& first = grid[members.front()];
      if (absl::Status s = timer.SetUpDecodes(first.decodes, first.context); !s.ok()) return s;
      for (size_t i : members) {
        if (absl::Status s = timer.Time(grid[i], absl::GetFlag(FLAGS_reps), samples[i]); !s.ok()) {
          return s;
        }
      }
    }
    std::fprintf(stderr, "round %d of %d done\n", round + 1, rounds);
  }
  return samples;
}

// The measured medians and what the fit predicts for them, split as fitted.
struct Fitted {
  exec_internal::StepCostFit fit;
  std::vector<StepCostSample> points;  // grid order, seconds = median
  std::vector<Spread> spreads;
  ErrorSummary train, held, spread;
};

absl::StatusOr<Fitted> Fit(const std::vector<Composition>& grid,
                           const std::vector<std::vector<double>>& samples) {
  Fitted f;
  std::vector<StepCostSample> train;
  std::vector<double> held_pred, held_meas, train_pred, train_meas, spreads;
  for (size_t i = 0; i < grid.size(); ++i) {
    StepCostSample s = grid[i].Features();
    f.spreads.push_back(SpreadOf(samples[i]));
    s.seconds = f.spreads.back().median;
    spreads.push_back(f.spreads.back().relative);
    f.points.push_back(s);
    if (!IsHeldOut(i)) train.push_back(s);
  }
  absl::StatusOr<exec_internal::StepCostFit> fit =
      exec_internal::FitStepCost(train, absl::GetFlag(FLAGS_batch_buckets));
  if (!fit.ok()) return fit.status();
  f.fit = *fit;
  for (size_t i = 0; i < grid.size(); ++i) {
    (IsHeldOut(i) ? held_pred : train_pred).push_back(f.fit.Predict(f.points[i]));
    (IsHeldOut(i) ? held_meas : train_meas).push_back(f.points[i].seconds);
  }
  absl::StatusOr<std::vector<double>> held = RelativeErrors(held_pred, held_meas);
  absl::StatusOr<std::vector<double>> trained = RelativeErrors(train_pred, train_meas);
  if (!held.ok()) return held.status();
  if (!trained.ok()) return trained.status();
  f.held = Summarize(*held);
  f.train = Summarize(*trained);
  f.spread = Summarize(spreads);
  return f;
}

// Prints one row per composition and returns the same as CSV.
std::string PrintPoints(const std::vector<Composition>& grid, const Fitted& f, size_t samples) {
  std::string csv =
      "decodes,context,prefill,prefill_start,P,D,K,median_s,p10_s,p90_s,samples,predicted_s,heldout\n";
  std::printf("%3s %4s %4s %4s %6s %10s %8s %10s %7s %s\n", "D", "C", "P", "S", "K",
              "median ms", "spread", "pred ms", "error", "held");
  for (size_t i = 0; i < grid.size(); ++i) {
    const Composition& c = grid[i];
    const StepCostSample& s = f.points[i];
    const Spread& sp = f.spreads[i];
    const double pred = f.fit.Predict(s);
    std::printf("%3d %4d %4d %4d %6.0f %10.3f %7.1f%% %10.3f %6.1f%% %s\n", c.decodes, c.context,
                c.prefill, c.prefill_start, s.kv_context, 1e3 * sp.median, 100 * sp.relative,
                1e3 * pred, 100 * std::fabs(pred - sp.median) / sp.median,
                IsHeldOut(i) ? "held-out" : "");
    absl::StrAppend(&csv, absl::StrFormat("%d,%d,%d,%d,%g,%g,%g,%.9g,%.9g,%.9g,%d,%.9g,%d\n",
                                          c.decodes, c.context, c.prefill, c.prefill_start,
                                          s.prefill_tokens, s.decode_seqs, s.kv_context,
                                          sp.median, sp.p10, sp.p90, samples, pred,
                                          IsHeldOut(i) ? 1 : 0));
  }
  return csv;
}

absl::Status WriteText(const std::string& path, const std::string& text) {
  if (path.empty()) return absl::OkStatus();
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  return f ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path));
}

absl::Status Report(const std::vector<Composition>& grid,
                    const std::vector<std::vector<double>>& samples, const std::string& model_name,
                    const lc::TinyModelSpec& spec) {
  absl::StatusOr<Fitted> f = Fit(grid, samples);
  if (!f.ok()) return f.status();
  const std::string csv = PrintPoints(grid, *f, samples.front().size());
  const std::string held_line = absl::StrFormat(
      "held-out error (%d compositions): median %.1f%% p90 %.1f%% max %.1f%% (target: median <= 10%%)",
      f->held.count, 100 * f->held.median, 100 * f->held.p90, 100 * f->held.max);
  const std::string spread_line = absl::StrFormat(
      "timing spread (p90-p10)/median over %d samples each: median %.1f%%, p90 %.1f%%, max %.1f%%",
      samples.front().size(), 100 * f->spread.median, 100 * f->spread.p90, 100 * f->spread.max);
  std::printf("c0=%.4g c1=%.4g c2=%.4g c3=%.4g c4=%.4g c5=%.4g\n", f->fit.c[0], f->fit.c[1],
              f->fit.c[2], f->fit.c[3], f->fit.c[4], f->fit.c[5]);
  if (!f->fit.base_by_tokens.empty()) {
    std::printf("base_by_tokens (ms, T = 1 ..):");
    for (double b : f->fit.base_by_tokens) std::printf(" %.3f", 1e3 * b);
    std::printf("\n");
  }
  std::printf("fit error (%d compositions): median %.1f%% p90 %.1f%% max %.1f%%\n%s\n%s\n",
              f->train.count, 100 * f->train.median, 100 * f->train.p90, 100 * f->train.max,
              held_line.c_str(), spread_line.c_str());

  exec_internal::ProfileInfo info;
  info.gpu = absl::StrFormat("CPU, llama.cpp, %d thread(s)", absl::GetFlag(FLAGS_threads));
  info.model = absl::StrFormat("self-written '%s' GGUF: %s", model_name, DescribeSpec(spec));
  info.comments = {
      "Produced by hearth_fidelity_calibrate (bench/fidelity) from real llama_decode() steps.",
      absl::StrFormat("n_batch %d, n_ctx %d, flash attention %s; %d compositions x %d rounds x %d reps, medians.",
                      absl::GetFlag(FLAGS_n_batch), absl::GetFlag(FLAGS_n_ctx),
                      absl::GetFlag(FLAGS_flash_attn) ? "llama.cpp's choice" : "off", grid.size(),
                      absl::GetFlag(FLAGS_rounds), absl::GetFlag(FLAGS_reps)),
      held_line, spread_line};
  const std::string profile = exec_internal::FormatStepCostProfile(f->fit, info);
  std::printf("%s", profile.c_str());
  if (absl::Status s = WriteText(absl::GetFlag(FLAGS_profile), profile); !s.ok()) return s;
  return WriteText(absl::GetFlag(FLAGS_points), csv);
}

absl::Status Run() {
  if (absl::GetFlag(FLAGS_rounds) < 1 || absl::GetFlag(FLAGS_reps) < 1) {
    return absl::InvalidArgumentError("--rounds and --reps must be >= 1");
  }
  const std::string name = absl::GetFlag(FLAGS_model);
  absl::StatusOr<lc::TinyModelSpec> spec = NamedModelSpec(name);
  if (!spec.ok()) return spec.status();
  std::string path = absl::GetFlag(FLAGS_model_path);
  if (path.empty()) path = absl::StrCat("/tmp/hearth_fidelity_", name, ".gguf");
  if (absl::Status s = lc::WriteTinyLlamaGguf(*spec, path); !s.ok()) return s;
  lc::SetLlamaLogging(false);
  if (absl::Status s = lc::LoadLlamaBackends(""); !s.ok()) return s;
  absl::StatusOr<lc::ModelPtr> model = lc::LoadModel(path);
  if (!model.ok()) return model.status();
  const std::vector<Composition> grid = Grid(absl::GetFlag(FLAGS_quick), absl::GetFlag(FLAGS_n_batch));
  int32_t max_seqs = 1;
  for (const Composition& c : grid) max_seqs = std::max(max_seqs, c.decodes + 1);
  lc::ContextOptions copts;
  copts.n_ctx = absl::GetFlag(FLAGS_n_ctx);
  copts.n_batch = absl::GetFlag(FLAGS_n_batch);
  copts.n_seq_max = max_seqs;
  copts.n_threads = absl::GetFlag(FLAGS_threads);
  copts.disable_flash_attention = !absl::GetFlag(FLAGS_flash_attn);
  absl::StatusOr<lc::ContextPtr> ctx = lc::CreateContext(model->get(), copts);
  if (!ctx.ok()) return ctx.status();
  std::printf("model %s (%s); %zu compositions, %d rounds x %d reps\n", name.c_str(),
              DescribeSpec(*spec).c_str(), grid.size(), absl::GetFlag(FLAGS_rounds),
              absl::GetFlag(FLAGS_reps));
  absl::StatusOr<std::vector<std::vector<double>>> samples = TimeGrid(ctx->get(), grid);
  if (!samples.ok()) return samples.status();
  return Report(grid, *samples, name, *spec);
}

}  // namespace
}  // namespace hearth::fidelity

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = hearth::fidelity::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "hearth_fidelity_calibrate: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

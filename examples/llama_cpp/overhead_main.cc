// hearth_llama_overhead: how much of an iteration Hearth itself costs next
// to llama.cpp's forward pass.
//
// For each batch size N in --sequences, N requests are admitted and
// prefilled; then, over --steps pure decode steps with all N running,
// the program sums Hearth's time (Scheduler::Plan + Scheduler::Complete),
// the executor's plan-to-batch mapping, and llama_decode(). It prints the
// per-step means and Hearth's share of the decode time.
//
//   hearth_llama_overhead --sequences=4,16,64 --steps=200
//   hearth_llama_overhead --n_embd=512 --n_layer=8 --n_ff=1536   # a wider model
//   hearth_llama_overhead --model=/path/to/real.gguf

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "hearth/common/clock.h"
#include "hearth_llama_cpp/llama_engine.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "hearth_llama_cpp/tiny_gguf.h"

ABSL_FLAG(std::string, model, "", "GGUF model; empty writes a random tiny-architecture model");
ABSL_FLAG(std::string, tiny_path, "/tmp/hearth_overhead_llama.gguf", "where that model is written");
ABSL_FLAG(int32_t, n_embd, 64, "width of the written model");
ABSL_FLAG(int32_t, n_layer, 2, "layers of the written model");
ABSL_FLAG(int32_t, n_ff, 128, "feed-forward width of the written model");
ABSL_FLAG(std::string, sequences, "4,16,64", "batch sizes to measure");
ABSL_FLAG(int32_t, steps, 200, "decode steps measured per batch size");
ABSL_FLAG(int32_t, prompt, 32, "prompt tokens per request");
ABSL_FLAG(int32_t, threads, 1,
          "llama.cpp CPU threads (0: its default; more than the free cores makes its "
          "thread barriers spin, 1000x slower on a loaded 2-core machine)");
ABSL_FLAG(std::string, backend_dir, "", "folder of ggml backend modules (default: found by CMake)");

namespace {

namespace lc = hearth::llama_cpp;

struct Measured {
  int steps = 0;
  absl::Duration hearth, mapping, decode;
};

absl::StatusOr<Measured> Measure(llama_model* model, int32_t n) {
  const int32_t prompt = absl::GetFlag(FLAGS_prompt);
  const int32_t steps = absl::GetFlag(FLAGS_steps);
  // Generous max_new_tokens: requests must outlive the measured window.
  const int32_t max_new = steps + prompt + 16;
  lc::ContextOptions copts;
  copts.n_seq_max = n;
  // Room for every decode plus one whole prompt, so prefills never starve.
  copts.n_batch = std::max<int32_t>(n + prompt, 64);
  copts.n_ctx = n * (prompt + max_new) + 256;
  copts.n_threads = absl::GetFlag(FLAGS_threads);
  absl::StatusOr<lc::ContextPtr> ctx = lc::CreateContext(model, copts);
  if (!ctx.ok()) return ctx.status();
  absl::StatusOr<std::unique_ptr<lc::LlamaEngine>> engine =
      lc::LlamaEngine::Create(ctx->get(), lc::LlamaEngineOptions{});
  if (!engine.ok()) return engine.status();
  for (int32_t i = 0; i < n; ++i) {
    hearth::RequestSpec spec;
    for (int32_t k = 0; k < prompt; ++k) spec.prompt_token_ids.push_back((i * 31 + k * 7) % 200 + 20);
    spec.max_new_tokens = max_new;
    if (absl::StatusOr<hearth::RequestId> id = (*engine)->Submit(spec); !id.ok()) return id.status();
  }
  hearth::RealClock clock;
  // Admit and prefill everyone; a few more steps finish the last prefill.
  for (int guard = 0; (*engine)->scheduler().stats().running < n; ++guard) {
    if (guard > 100 * n || (*engine)->pending() < n) {
      return absl::FailedPreconditionError(absl::StrCat(
          "only ", (*engine)->scheduler().stats().running, " of ", n,
          " requests running (did one end early? a real model may stop at end-of-generation)"));
    }
    if (absl::StatusOr<bool> ran = (*engine)->Step(clock); !ran.ok()) return ran.status();
  }
  for (int i = 0; i < 3; ++i) {
    if (absl::StatusOr<bool> ran = (*engine)->Step(clock); !ran.ok()) return ran.status();
  }
  Measured m;
  const lc::LlamaEngineStats e0 = (*engine)->stats();
  const lc::LlamaExecutorStats x0 = (*engine)->executor().stats();
  for (; m.steps < steps && (*engine)->scheduler().stats().running == n; ++m.steps) {
    if (absl::StatusOr<bool> ran = (*engine)->Step(clock); !ran.ok()) return ran.status();
  }
  const lc::LlamaEngineStats& e1 = (*engine)->stats();
  const lc::LlamaExecutorStats& x1 = (*engine)->executor().stats();
  m.hearth = (e1.plan_time - e0.plan_time) + (e1.complete_time - e0.complete_time);
  m.mapping = x1.mapping_time - x0.mapping_time;
  m.decode = x1.decode_time - x0.decode_time;
  return m;
}

absl::Status Run() {
  lc::SetLlamaLogging(false);
  if (absl::Status s = lc::LoadLlamaBackends(absl::GetFlag(FLAGS_backend_dir)); !s.ok()) return s;
  std::string path = absl::GetFlag(FLAGS_model);
  if (path.empty()) {
    lc::TinyModelSpec spec;
    spec.n_embd = absl::GetFlag(FLAGS_n_embd);
    spec.n_layer = absl::GetFlag(FLAGS_n_layer);
    spec.n_ff = absl::GetFlag(FLAGS_n_ff);
    spec.n_head = spec.n_embd >= 256 ? 8 : 4;
    spec.n_head_kv = spec.n_head / 2;
    // Every sequence must keep decoding through the measured window.
    spec.suppress_control_tokens = true;
    path = absl::GetFlag(FLAGS_tiny_path);
    if (absl::Status s = lc::WriteTinyLlamaGguf(spec, path); !s.ok()) return s;
  }
  absl::StatusOr<lc::ModelPtr> model = lc::LoadModel(path);
  if (!model.ok()) return model.status();
  std::printf("model %s: %d layers, width %d\n", path.c_str(), llama_model_n_layer(model->get()),
              llama_model_n_embd(model->get()));
  std::printf("%5s %6s %14s %16s %16s %12s %14s\n", "seqs", "steps", "decode ms/step",
              "Hearth us/step", "mapping us/step", "Hearth/dec", "+mapping/dec");
  for (absl::string_view field : absl::StrSplit(absl::GetFlag(FLAGS_sequences), ',')) {
    int32_t n = 0;
    if (!absl::SimpleAtoi(field, &n) || n < 1 || n > 256) {
      return absl::InvalidArgumentError(absl::StrCat("--sequences entry '", std::string(field),
                                                     "' is not in [1, 256]"));
    }
    absl::StatusOr<Measured> m = Measure(model->get(), n);
    if (!m.ok()) return m.status();
    const double steps = std::max(1, m->steps);
    const double dec_us = absl::ToDoubleMicroseconds(m->decode) / steps;
    const double hearth_us = absl::ToDoubleMicroseconds(m->hearth) / steps;
    const double map_us = absl::ToDoubleMicroseconds(m->mapping) / steps;
    std::printf("%5d %6d %14.3f %16.2f %16.2f %11.3f%% %13.3f%%\n", n, m->steps, dec_us / 1000.0,
                hearth_us, map_us, 100.0 * hearth_us / dec_us, 100.0 * (hearth_us + map_us) / dec_us);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    std::fprintf(stderr, "hearth_llama_overhead: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

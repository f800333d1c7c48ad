// hearth_llama_kv_layout: llama.cpp's KV layouts side by side, the unified
// pool (every token attends over every cell in use) against per-sequence
// streams (each sequence over its own), on the same model in one process.
//
// Two workloads, each run --reps times per layout, the layouts alternating
// (A B B A ...) so that a noisy machine slows both alike:
//   decode  --sequences long sequences, each prefilled to --prompt tokens
//           with plain llama_decode(), then --steps decode steps of one
//           token each: decode tokens/s.
//   flood   --docs requests of --prompt tokens and --new_tokens outputs,
//           submitted at once to a LlamaEngine (Hearth's plans, FIFO,
//           --prefill_chunk): output tokens/s over the whole run.
//   prefix  streams only: the cost of a --prompt-token prefix hit served by
//           copying a whole stream (llama_memory_seq_cp, what the executor
//           does) against recomputing the prefix; each hit ends with one
//           decoded token, which applies the copy.
//   swap    one --prompt-token sequence preempted and resumed on
//           --kv_layout: its cells saved to host memory and restored
//           (llama_state_seq_get_data / set_data, what the executor does
//           for Hearth's swap) against recomputing them: ms per round trip.
//   preempt the flood on --kv_layout with Hearth's pool cut to --kv_blocks,
//           preempting by recompute against by swap (--host_blocks):
//           output tokens/s, and the preemptions of each run.
// Prints each run and the median ratio of the second variant to the first.
//
//   hearth_llama_kv_layout --workload=decode --reps=5
//   hearth_llama_kv_layout --workload=flood --docs=40 --prompt=1500 --new_tokens=64
//   hearth_llama_kv_layout --workload=prefix --reps=5
//   hearth_llama_kv_layout --workload=swap --reps=5
//   hearth_llama_kv_layout --workload=preempt --docs=16 --kv_blocks=600

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "hearth/common/clock.h"
#include "hearth_llama_cpp/llama_engine.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "hearth_llama_cpp/tiny_gguf.h"

ABSL_FLAG(std::string, model, "", "GGUF model; empty writes a random tiny-architecture model");
ABSL_FLAG(std::string, tiny_path, "/tmp/hearth_kv_layout_llama.gguf", "where that model is written");
ABSL_FLAG(int32_t, n_embd, 256, "width of the written model");
ABSL_FLAG(int32_t, n_layer, 4, "layers of the written model");
ABSL_FLAG(int32_t, n_ff, 768, "feed-forward width of the written model");
ABSL_FLAG(std::string, workload, "decode", "decode, flood, prefix, swap or preempt");
ABSL_FLAG(std::string, kv_layout, "streams", "swap, preempt: unified or streams");
ABSL_FLAG(int32_t, kv_blocks, 600, "preempt: Hearth's KV blocks (16 tokens each)");
ABSL_FLAG(int32_t, host_blocks, 4096, "preempt: Hearth's host blocks in the swap runs");
ABSL_FLAG(int32_t, sequences, 8, "sequence ids of the context (running at once)");
ABSL_FLAG(int32_t, n_ctx, 16384, "KV cells in all");
ABSL_FLAG(int32_t, n_batch, 512, "llama.cpp n_batch (Hearth's token budget)");
ABSL_FLAG(int32_t, prompt, 1500, "prompt tokens per sequence");
ABSL_FLAG(int32_t, steps, 64, "decode: decode steps measured");
ABSL_FLAG(int32_t, docs, 40, "flood: requests submitted");
ABSL_FLAG(int32_t, new_tokens, 64, "flood: output tokens per request");
ABSL_FLAG(int32_t, prefill_chunk, 128, "flood: Hearth's max_prefill_chunk_tokens");
ABSL_FLAG(int32_t, reps, 3, "runs per layout");
ABSL_FLAG(int32_t, threads, 1, "llama.cpp CPU threads");
ABSL_FLAG(bool, flash_attention, true, "let llama.cpp use flash attention (its default)");
ABSL_FLAG(bool, verbose, false, "pass llama.cpp's logs through");
ABSL_FLAG(std::string, backend_dir, "", "folder of ggml backend modules (default: found by CMake)");

namespace {

namespace lc = hearth::llama_cpp;

absl::StatusOr<lc::ContextPtr> NewContext(llama_model* model, lc::KvLayout layout) {
  lc::ContextOptions copts;
  copts.n_ctx = absl::GetFlag(FLAGS_n_ctx);
  copts.n_batch = absl::GetFlag(FLAGS_n_batch);
  copts.n_seq_max = absl::GetFlag(FLAGS_sequences);
  copts.n_threads = absl::GetFlag(FLAGS_threads);
  copts.kv_layout = layout;
  copts.disable_flash_attention = !absl::GetFlag(FLAGS_flash_attention);
  return lc::CreateContext(model, copts);
}

int32_t TokenAt(int32_t seq, int32_t pos) { return (seq * 31 + pos * 7) % 200 + 20; }

// Decodes positions [from, from + n) of each of `seqs` sequences, `span`
// positions of every sequence per llama_decode() (one batch: ids in order).
absl::Status DecodeSpan(llama_context* ctx, llama_batch& batch, int32_t seqs, int32_t from,
                        int32_t n, int32_t span) {
  for (int32_t k = 0; k < n; k += span) {
    const int32_t len = std::min(n - k, span);
    batch.n_tokens = 0;
    for (int32_t s = 0; s < seqs; ++s) {
      for (int32_t j = 0; j < len; ++j) {
        const int32_t i = batch.n_tokens++;
        batch.token[i] = TokenAt(s, from + k + j);
        batch.pos[i] = from + k + j;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = s;
        batch.logits[i] = j + 1 == len;
      }
    }
    if (int32_t rc = llama_decode(ctx, batch); rc != 0) {
      return absl::InternalError(absl::StrCat("llama_decode returned ", rc));
    }
  }
  return absl::OkStatus();
}

// One more token for sequence `seq` at position `pos`.
absl::Status DecodeOne(llama_context* ctx, llama_batch& batch, llama_seq_id seq, int32_t pos) {
  batch.n_tokens = 1;
  batch.token[0] = TokenAt(0, pos);
  batch.pos[0] = pos;
  batch.n_seq_id[0] = 1;
  batch.seq_id[0][0] = seq;
  batch.logits[0] = true;
  if (int32_t rc = llama_decode(ctx, batch); rc != 0) {
    return absl::InternalError(absl::StrCat("llama_decode returned ", rc));
  }
  return absl::OkStatus();
}

// Decode tokens per second with every sequence prefilled to --prompt.
absl::StatusOr<double> DecodeRate(llama_model* model, lc::KvLayout layout) {
  absl::StatusOr<lc::ContextPtr> ctx = NewContext(model, layout);
  if (!ctx.ok()) return ctx.status();
  const int32_t seqs = absl::GetFlag(FLAGS_sequences);
  const int32_t prompt = absl::GetFlag(FLAGS_prompt);
  const int32_t steps = absl::GetFlag(FLAGS_steps);
  llama_batch batch = llama_batch_init(absl::GetFlag(FLAGS_n_batch), 0, 1);
  // Prefill: as many positions of every sequence as n_batch holds.
  const int32_t span = std::max(1, absl::GetFlag(FLAGS_n_batch) / seqs);
  absl::Status s = DecodeSpan(ctx->get(), batch, seqs, 0, prompt, span);
  const absl::Time start = absl::Now();
  if (s.ok()) s = DecodeSpan(ctx->get(), batch, seqs, prompt, steps, 1);
  const absl::Duration took = absl::Now() - start;
  llama_batch_free(batch);
  if (!s.ok()) return s;
  return seqs * steps / absl::ToDoubleSeconds(took);
}

// Output tokens per second of a flood of --docs requests through LlamaEngine
// (`options` as given, the prefill chunk from the flags).
absl::StatusOr<double> FloodRate(llama_model* model, lc::KvLayout layout,
                                 lc::LlamaEngineOptions options = {}) {
  absl::StatusOr<lc::ContextPtr> ctx = NewContext(model, layout);
  if (!ctx.ok()) return ctx.status();
  options.scheduler.max_prefill_chunk_tokens = absl::GetFlag(FLAGS_prefill_chunk);
  absl::StatusOr<std::unique_ptr<lc::LlamaEngine>> engine =
      lc::LlamaEngine::Create(ctx->get(), options);
  if (!engine.ok()) return engine.status();
  const int32_t new_tokens = absl::GetFlag(FLAGS_new_tokens);
  for (int32_t d = 0; d < absl::GetFlag(FLAGS_docs); ++d) {
    hearth::RequestSpec spec;
    for (int32_t k = 0; k < absl::GetFlag(FLAGS_prompt); ++k) {
      spec.prompt_token_ids.push_back(TokenAt(d, k));
    }
    spec.max_new_tokens = new_tokens;
    if (absl::StatusOr<hearth::RequestId> id = (*engine)->Submit(spec); !id.ok()) return id.status();
  }
  hearth::RealClock clock;
  const absl::Time start = absl::Now();
  int64_t output = 0;
  while ((*engine)->pending() > 0) {
    if (absl::StatusOr<bool> ran = (*engine)->Step(clock); !ran.ok()) return ran.status();
    for (const lc::Completion& c : (*engine)->TakeCompletions()) {
      output += static_cast<int64_t>(c.output.size());
    }
  }
  const double rate = output / absl::ToDoubleSeconds(absl::Now() - start);
  if (options.kv_blocks > 0) {
    const lc::LlamaExecutorStats& x = (*engine)->executor().stats();
    std::printf("  %llu preemptions, %llu swapped in, %.1f ms saving and restoring\n",
                static_cast<unsigned long long>((*engine)->scheduler().stats().preemptions),
                static_cast<unsigned long long>(x.swapped_in),
                absl::ToDoubleMilliseconds(x.swap_time));
  }
  return rate;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Milliseconds for one prefix hit on streams: sequence 0 holds --prompt
// positions; `copy` serves sequence 1 by a whole-stream copy, else the
// prefix is recomputed. One more token is decoded either way.
absl::StatusOr<double> PrefixHitMs(llama_model* model, bool copy) {
  absl::StatusOr<lc::ContextPtr> ctx = NewContext(model, lc::KvLayout::kPerSequence);
  if (!ctx.ok()) return ctx.status();
  llama_context* c = ctx->get();
  const int32_t prompt = absl::GetFlag(FLAGS_prompt);
  const int32_t n_batch = absl::GetFlag(FLAGS_n_batch);
  llama_batch batch = llama_batch_init(n_batch, 0, 1);
  absl::Status s = DecodeSpan(c, batch, 1, 0, prompt, n_batch);
  const absl::Time start = absl::Now();
  if (s.ok() && copy) {
    llama_memory_seq_cp(llama_get_memory(c), 0, 1, -1, -1);
    llama_memory_seq_rm(llama_get_memory(c), 1, prompt, -1);
  }
  // Recomputing sequence 0's prefix into itself, cleared, runs the forward
  // passes a recompute into a new sequence would.
  if (s.ok() && !copy) {
    llama_memory_seq_rm(llama_get_memory(c), 0, -1, -1);
    s = DecodeSpan(c, batch, 1, 0, prompt, n_batch);
  }
  if (s.ok()) s = DecodeOne(c, batch, copy ? 1 : 0, prompt);
  const absl::Duration took = absl::Now() - start;
  llama_batch_free(batch);
  if (!s.ok()) return s;
  return absl::ToDoubleMilliseconds(took);
}

lc::KvLayout LayoutFlag() {
  return absl::GetFlag(FLAGS_kv_layout) == "unified" ? lc::KvLayout::kUnified
                                                     : lc::KvLayout::kPerSequence;
}

// Milliseconds for one preemption round trip of sequence 0 (--prompt
// positions): `swap` saves its cells to host memory and restores them into
// sequence 1, else they are dropped and recomputed. One more token is
// decoded either way.
absl::StatusOr<double> PreemptMs(llama_model* model, bool swap) {
  absl::StatusOr<lc::ContextPtr> ctx = NewContext(model, LayoutFlag());
  if (!ctx.ok()) return ctx.status();
  llama_context* c = ctx->get();
  const int32_t prompt = absl::GetFlag(FLAGS_prompt);
  const int32_t n_batch = absl::GetFlag(FLAGS_n_batch);
  llama_batch batch = llama_batch_init(n_batch, 0, 1);
  absl::Status s = DecodeSpan(c, batch, 1, 0, prompt, n_batch);
  const absl::Time start = absl::Now();
  std::vector<uint8_t> host(swap ? llama_state_seq_get_size(c, 0) : 0);
  if (s.ok() && swap && llama_state_seq_get_data(c, host.data(), host.size(), 0) == 0) {
    s = absl::InternalError("llama_state_seq_get_data saved nothing");
  }
  llama_memory_seq_rm(llama_get_memory(c), 0, -1, -1);
  if (s.ok() && swap && llama_state_seq_set_data(c, host.data(), host.size(), 1) == 0) {
    s = absl::InternalError("llama_state_seq_set_data restored nothing");
  }
  if (s.ok() && !swap) s = DecodeSpan(c, batch, 1, 0, prompt, n_batch);
  if (s.ok()) s = swap ? DecodeOne(c, batch, 1, prompt) : DecodeOne(c, batch, 0, prompt);
  const absl::Duration took = absl::Now() - start;
  llama_batch_free(batch);
  if (!s.ok()) return s;
  return absl::ToDoubleMilliseconds(took);
}

// Two variants of one workload, measured alternately (A B, then B A).
struct Comparison {
  const char* names[2];
  const char* unit;
  std::function<absl::StatusOr<double>(llama_model*, int)> measure;
};

absl::Status Compare(llama_model* model, const Comparison& c) {
  std::vector<double> ratios;
  for (int32_t rep = 0; rep < absl::GetFlag(FLAGS_reps); ++rep) {
    double value[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const int which = (rep % 2 == 0) ? k : 1 - k;
      absl::StatusOr<double> r = c.measure(model, which);
      if (!r.ok()) return r.status();
      value[which] = *r;
      std::printf("rep %d %-9s %10.2f %s\n", rep, c.names[which], *r, c.unit);
      std::fflush(stdout);
    }
    ratios.push_back(value[1] / value[0]);
  }
  std::printf("median %s/%s: %.3fx over %zu reps\n", c.names[1], c.names[0], Median(ratios),
              ratios.size());
  return absl::OkStatus();
}

absl::StatusOr<Comparison> ComparisonFor(const std::string& workload) {
  auto layout = [](int which) {
    return which == 0 ? lc::KvLayout::kUnified : lc::KvLayout::kPerSequence;
  };
  if (workload == "decode") {
    return Comparison{{"unified", "streams"}, "tok/s",
                      [=](llama_model* m, int w) { return DecodeRate(m, layout(w)); }};
  }
  if (workload == "flood") {
    return Comparison{{"unified", "streams"}, "tok/s",
                      [=](llama_model* m, int w) { return FloodRate(m, layout(w)); }};
  }
  if (workload == "prefix") {
    return Comparison{{"recompute", "copy"}, "ms per hit",
                      [](llama_model* m, int w) { return PrefixHitMs(m, w == 1); }};
  }
  if (workload == "swap") {
    return Comparison{{"recompute", "swap"}, "ms per preemption",
                      [](llama_model* m, int w) { return PreemptMs(m, w == 1); }};
  }
  if (workload == "preempt") {
    return Comparison{{"recompute", "swap"}, "tok/s", [](llama_model* m, int w) {
                        lc::LlamaEngineOptions options;
                        options.kv_blocks = absl::GetFlag(FLAGS_kv_blocks);
                        options.host_blocks = w == 1 ? absl::GetFlag(FLAGS_host_blocks) : 0;
                        options.scheduler.swap_block_cost_tokens = 0;
                        return FloodRate(m, LayoutFlag(), options);
                      }};
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--workload is '", workload, "'; allowed: decode, flood, prefix, swap, preempt"));
}

absl::StatusOr<lc::ModelPtr> Model() {
  std::string path = absl::GetFlag(FLAGS_model);
  if (path.empty()) {
    lc::TinyModelSpec spec;
    spec.n_embd = absl::GetFlag(FLAGS_n_embd);
    spec.n_layer = absl::GetFlag(FLAGS_n_layer);
    spec.n_ff = absl::GetFlag(FLAGS_n_ff);
    spec.n_head = spec.n_embd >= 256 ? 8 : 4;
    spec.n_head_kv = spec.n_head / 2;
    spec.n_ctx_train = std::max(spec.n_ctx_train, absl::GetFlag(FLAGS_n_ctx));
    // Every request must run to new_tokens.
    spec.suppress_control_tokens = true;
    path = absl::GetFlag(FLAGS_tiny_path);
    if (absl::Status s = lc::WriteTinyLlamaGguf(spec, path); !s.ok()) return s;
  }
  return lc::LoadModel(path);
}

absl::Status Run() {
  lc::SetLlamaLogging(absl::GetFlag(FLAGS_verbose));
  if (absl::Status s = lc::LoadLlamaBackends(absl::GetFlag(FLAGS_backend_dir)); !s.ok()) return s;
  const std::string workload = absl::GetFlag(FLAGS_workload);
  absl::StatusOr<Comparison> comparison = ComparisonFor(workload);
  if (!comparison.ok()) return comparison.status();
  const std::string kv_layout = absl::GetFlag(FLAGS_kv_layout);
  if (kv_layout != "unified" && kv_layout != "streams") {
    return absl::InvalidArgumentError(
        absl::StrCat("--kv_layout is '", kv_layout, "'; allowed: unified, streams"));
  }
  absl::StatusOr<lc::ModelPtr> model = Model();
  if (!model.ok()) return model.status();
  std::printf("%s: %d layers, width %d, %d sequences, n_ctx %d, prompt %d\n", workload.c_str(),
              llama_model_n_layer(model->get()), llama_model_n_embd(model->get()),
              absl::GetFlag(FLAGS_sequences), absl::GetFlag(FLAGS_n_ctx), absl::GetFlag(FLAGS_prompt));
  return Compare(model->get(), *comparison);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    std::fprintf(stderr, "hearth_llama_kv_layout: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

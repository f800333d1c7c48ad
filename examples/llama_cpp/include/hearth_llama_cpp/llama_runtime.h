// File: hearth_llama_cpp/llama_runtime.h
//
// Owning handles and checked constructors for the llama.cpp objects Hearth's
// integration uses: backends, a model and a context. llama.cpp reports
// failures by null pointers and log lines; these helpers turn them into
// absl::Status with what was asked for.
//
// llama.cpp's backend registry and log callback are process-wide (its design,
// not ours): LoadLlamaBackends() registers the ggml backends found in a folder
// once (a second call sees them registered and does nothing), and
// SetLlamaLogging() routes llama.cpp's and ggml's logs.
//
// Example:
//   if (absl::Status s = hearth::llama_cpp::LoadLlamaBackends(""); !s.ok()) return s;
//   auto model = hearth::llama_cpp::LoadModel("/tmp/tiny.gguf");
//   hearth::llama_cpp::ContextOptions copts;
//   copts.n_ctx = 2048;
//   copts.n_seq_max = 16;
//   auto ctx = hearth::llama_cpp::CreateContext(model->get(), copts);

#ifndef HEARTH_LLAMA_CPP_LLAMA_RUNTIME_H_
#define HEARTH_LLAMA_CPP_LLAMA_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llama.h"

namespace hearth::llama_cpp {

struct ModelDeleter {
  void operator()(llama_model* model) const { llama_model_free(model); }
};
struct ContextDeleter {
  void operator()(llama_context* ctx) const { llama_free(ctx); }
};
using ModelPtr = std::unique_ptr<llama_model, ModelDeleter>;
using ContextPtr = std::unique_ptr<llama_context, ContextDeleter>;

// The folder CMake found llama.cpp's loadable backends in (may be empty).
std::string DefaultBackendDir();

// LoadLlamaBackends()
//
// Registers the ggml backends (CPU variants, CUDA, ...) built as loadable
// modules in `dir` (empty: DefaultBackendDir()), unless a CPU backend is
// already registered (static builds, or a previous call). Without this a
// prebuilt llama.cpp has no device to run on. FailedPrecondition when no
// backend device exists afterwards.
absl::Status LoadLlamaBackends(std::string_view dir);

// SetLlamaLogging()
//
// `verbose` false keeps only llama.cpp's and ggml's errors (on stderr);
// true passes everything through.
void SetLlamaLogging(bool verbose);

// LoadModel()
//
// Loads a GGUF model on the CPU (no layers offloaded; a user's GPU build can
// raise n_gpu_layers through `gpu_layers`). InvalidArgument when llama.cpp
// cannot read `path` as a model.
absl::StatusOr<ModelPtr> LoadModel(const std::string& path,
                                   int32_t gpu_layers = 0);

// How llama.cpp lays out the KV cells of a context's sequences. Streams are
// faster wherever measured (bench/RESULTS.md, "llama.cpp KV layout"): use
// them when every request fits n_ctx / n_seq_max. The default stays the
// unified pool because streams cap every sequence at its stream, and hosts
// sized for a shared pool (many sequence ids over a modest n_ctx) would see
// their longest request shrink to a few hundred tokens.
enum class KvLayout {
  // One pool all sequences share (kv_unified): one sequence may use the
  // whole n_ctx, but every token's attention spans every cell in use, by
  // any sequence.
  kUnified,
  // One stream of n_ctx / n_seq_max cells per sequence id (llama.cpp's own
  // default): attention spans the sequence's own stream only, and a stream
  // bounds the length of the sequence on it.
  kPerSequence,
};

struct ContextOptions {
  // KV cells in all, padded up by llama.cpp to a multiple of 256 (with
  // kPerSequence: each stream's n_ctx / n_seq_max is padded, so n_ctx may
  // grow to n_seq_max * 256). Must be >= 1.
  int32_t n_ctx = 2048;
  // Most tokens one llama_decode() accepts; more aborts the process, so
  // Hearth's max_batched_tokens is set to exactly this. Must be >= 1.
  int32_t n_batch = 512;
  // Most sequences (llama seq ids) alive at once. Must be in [1, 256].
  int32_t n_seq_max = 16;
  // CPU threads; 0 lets llama.cpp choose.
  int32_t n_threads = 0;
  // Turns off flash attention (llama.cpp picks it by default where the
  // device supports it). Its CPU kernel rounds through f16 in an order that
  // depends on the batch and on where each sequence's KV cells lie, so the
  // same sequence's logits move by up to ~1e-3 of their scale between
  // schedules; without it llama.cpp's CPU results here are bit-identical
  // whatever the batch (measured; see tests/llama_cpp).
  bool disable_flash_attention = false;
  // Changes performance and the longest sequence (see KvLayout).
  // Default: kUnified.
  KvLayout kv_layout = KvLayout::kUnified;
};

// CreateContext()
//
// A context with the KV layout of `options.kv_layout`. InvalidArgument on
// bad options; Internal when llama.cpp refuses them.
absl::StatusOr<ContextPtr> CreateContext(llama_model* model,
                                         const ContextOptions& options);

// KvStreams()
//
// How many KV streams `ctx` has: 1 for a unified pool (or one sequence id),
// n_seq_max for KvLayout::kPerSequence, each of llama_n_ctx_seq(ctx) cells.
// llama.cpp has no getter for kv_unified; its per-sequence context size
// tells the layout apart.
int32_t KvStreams(const llama_context* ctx);

}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_LLAMA_RUNTIME_H_

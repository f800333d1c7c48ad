#include "hearth_llama_cpp/llama_runtime.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "ggml-backend.h"
#include "ggml.h"

namespace hearth::llama_cpp {
namespace {

void ErrorsOnly(ggml_log_level level, const char* text, void* /*user*/) {
  if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

}  // namespace

std::string DefaultBackendDir() {
#ifdef HEARTH_LLAMA_CPP_BACKEND_DIR
  return HEARTH_LLAMA_CPP_BACKEND_DIR;
#else
  return "";
#endif
}

absl::Status LoadLlamaBackends(std::string_view dir) {
  const std::string path = dir.empty() ? DefaultBackendDir() : std::string(dir);
  // The registry is process-wide; loading the same modules twice would
  // register duplicate devices, so an existing CPU backend means "done".
  if (ggml_backend_reg_by_name("CPU") == nullptr) {
    if (path.empty()) {
      ggml_backend_load_all();
    } else {
      ggml_backend_load_all_from_path(path.c_str());
    }
  }
  if (ggml_backend_dev_count() == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no ggml backend could be loaded from '", path,
        "'; expected libggml-cpu*.so there (run examples/llama_cpp/install_llama_cpp.sh, "
        "or pass the folder holding your llama.cpp build's backends)"));
  }
  return absl::OkStatus();
}

void SetLlamaLogging(bool verbose) {
  llama_log_set(verbose ? nullptr : ErrorsOnly, nullptr);
  ggml_log_set(verbose ? nullptr : ErrorsOnly, nullptr);
}

absl::StatusOr<ModelPtr> LoadModel(const std::string& path, int32_t gpu_layers) {
  if (path.empty()) {
    return absl::InvalidArgumentError("model path is empty; pass a .gguf file");
  }
  llama_model_params params = llama_model_default_params();
  params.n_gpu_layers = gpu_layers;
  ModelPtr model(llama_model_load_from_file(path.c_str(), params));
  if (model == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "llama.cpp could not load '", path,
        "' as a GGUF model (missing file, or an architecture this llama.cpp build does not know)"));
  }
  return model;
}

absl::StatusOr<ContextPtr> CreateContext(llama_model* model,
                                         const ContextOptions& options) {
  if (model == nullptr) return absl::InvalidArgumentError("model is null");
  if (options.n_ctx < 1 || options.n_batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "n_ctx (", options.n_ctx, ") and n_batch (", options.n_batch, ") must be >= 1"));
  }
  if (options.n_seq_max < 1 || options.n_seq_max > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("n_seq_max is ", options.n_seq_max, "; allowed: [1, 256]"));
  }
  if (options.kv_layout != KvLayout::kUnified && options.kv_layout != KvLayout::kPerSequence) {
    return absl::InvalidArgumentError(
        "kv_layout is not a KvLayout value; allowed: kUnified, kPerSequence");
  }
  if (options.n_threads < 0) {
    return absl::InvalidArgumentError("n_threads must be >= 0 (0: llama.cpp's choice)");
  }
  llama_context_params params = llama_context_default_params();
  params.n_ctx = static_cast<uint32_t>(options.n_ctx);
  params.n_batch = static_cast<uint32_t>(options.n_batch);
  // One physical batch per logical batch: every plan is one forward pass.
  params.n_ubatch = static_cast<uint32_t>(options.n_batch);
  params.n_seq_max = static_cast<uint32_t>(options.n_seq_max);
  params.kv_unified = options.kv_layout == KvLayout::kUnified;
  params.no_perf = true;
  if (options.disable_flash_attention) {
    params.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  }
  if (options.n_threads > 0) {
    params.n_threads = options.n_threads;
    params.n_threads_batch = options.n_threads;
  }
  ContextPtr ctx(llama_init_from_model(model, params));
  if (ctx == nullptr) {
    return absl::InternalError(absl::StrCat(
        "llama.cpp refused the context (n_ctx ", options.n_ctx, ", n_batch ", options.n_batch,
        ", n_seq_max ", options.n_seq_max, "); see its error log above"));
  }
  return ctx;
}

int32_t KvStreams(const llama_context* ctx) {
  const uint32_t per_seq = llama_n_ctx_seq(ctx);
  return per_seq == 0 ? 1 : static_cast<int32_t>(llama_n_ctx(ctx) / per_seq);
}

}  // namespace hearth::llama_cpp

#include "bench/fidelity/bench_models.h"

#include "absl/strings/str_format.h"

namespace hearth::fidelity {

absl::StatusOr<llama_cpp::TinyModelSpec> NamedModelSpec(const std::string& name) {
  llama_cpp::TinyModelSpec spec;
  spec.suppress_control_tokens = true;
  if (name == "tiny") return spec;
  if (name == "wide") {
    spec.n_layer = 8;
    spec.n_embd = 512;
    spec.n_ff = 1536;
    spec.n_head = 8;
    spec.n_head_kv = 4;
    return spec;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("model '%s' is not known; allowed: tiny, wide", name));
}

absl::Status WriteNamedModel(const std::string& name, const std::string& path) {
  absl::StatusOr<llama_cpp::TinyModelSpec> spec = NamedModelSpec(name);
  if (!spec.ok()) return spec.status();
  return llama_cpp::WriteTinyLlamaGguf(*spec, path);
}

std::string DescribeSpec(const llama_cpp::TinyModelSpec& spec) {
  return absl::StrFormat("%d layers, width %d, ff %d, %d heads (%d KV), f32", spec.n_layer,
                         spec.n_embd, spec.n_ff, spec.n_head, spec.n_head_kv);
}

}  // namespace hearth::fidelity

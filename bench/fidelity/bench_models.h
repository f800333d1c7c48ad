// File: bench/fidelity/bench_models.h
//
// The two self-written GGUF models the fidelity check runs on, by name:
//   "tiny"  2 layers, width 64, ff 128 (tests/llama_cpp's model): per-step
//           overheads dominate;
//   "wide"  8 layers, width 512, ff 1536 (the overhead README's wider model):
//           matrix products and attention over the context dominate.
// Both suppress BOS/EOS so greedy decoding runs to max_new_tokens, which
// keeps the real run's output lengths equal to the request list's.

#ifndef HEARTH_BENCH_FIDELITY_BENCH_MODELS_H_
#define HEARTH_BENCH_FIDELITY_BENCH_MODELS_H_

#include <string>

#include "absl/status/statusor.h"
#include "hearth_llama_cpp/tiny_gguf.h"

namespace hearth::fidelity {

// InvalidArgument naming the allowed names for anything but "tiny"/"wide".
absl::StatusOr<llama_cpp::TinyModelSpec> NamedModelSpec(const std::string& name);

// Writes the named model to `path` (same name -> same bytes).
absl::Status WriteNamedModel(const std::string& name, const std::string& path);

// "2 layers, width 64, ff 128, 4 heads (2 KV)".
std::string DescribeSpec(const llama_cpp::TinyModelSpec& spec);

}  // namespace hearth::fidelity

#endif  // HEARTH_BENCH_FIDELITY_BENCH_MODELS_H_

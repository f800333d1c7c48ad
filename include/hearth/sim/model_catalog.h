// File: hearth/sim/model_catalog.h
//
// Architecture figures of the models the simulator serves: parameter count,
// layers, attention heads, KV heads (grouped-query attention), head size,
// context length and vocabulary. The roofline model derives weight bytes and
// FLOPs from them, and the simulator sizes the KV cache with
// KvBytesPerToken(). Sources (each model's config.json and model card) are
// cited in model_catalog.cc.
//
// Example:
//   hearth::ModelSpec m = *hearth::FindModelSpec("Llama-3.1-8B");
//   int64_t kv = m.KvBytesPerToken();   // 32 * 8 * 128 * 2 * 2 = 131072

#ifndef HEARTH_SIM_MODEL_CATALOG_H_
#define HEARTH_SIM_MODEL_CATALOG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hearth {

struct ModelSpec {
  std::string name;
  int64_t params = 0;
  int32_t layers = 0;
  int32_t hidden = 0;
  int32_t heads = 0;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int32_t context_length = 0;
  int32_t vocab_size = 0;
  // Bytes per weight and per KV element; 2 for BF16.
  int32_t dtype_bytes = 2;
  // False for encoder-only embedding models: one forward pass, no decode.
  bool generative = true;

  int64_t WeightBytes() const { return params * dtype_bytes; }
  // K and V for every layer and KV head.
  int64_t KvBytesPerToken() const {
    return int64_t{layers} * kv_heads * head_dim * 2 * dtype_bytes;
  }
};

const std::vector<ModelSpec>& ModelCatalog();

// Lookup ignoring case, spaces, '-', '_' and '.'. NotFound lists known names.
absl::StatusOr<ModelSpec> FindModelSpec(std::string_view name);

}  // namespace hearth

#endif  // HEARTH_SIM_MODEL_CATALOG_H_

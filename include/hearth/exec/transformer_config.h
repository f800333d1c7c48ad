// File: hearth/exec/transformer_config.h
//
// The shape of the decoder-only transformer that Hearth's executors run: a
// Llama-style stack (RMSNorm, rotary positions, grouped-query attention,
// SiLU-gated MLP, untied output projection) with weights drawn from a seed.
// The same config and seed give the same weights in every executor (the CPU
// reference and the CUDA executor generate them with one counter-based hash),
// so their outputs can be compared.
//
// The KV pool of an executor is laid out block-major, so that one block (all
// layers, K and V) is one contiguous range and a swap or copy-on-write is one
// copy:
//   pool[block][layer][k=0|v=1][kv_head][slot][head_dim]
// KvBytesPerToken() gives the bytes one token's K and V take in that pool.
//
// Example:
//   hearth::TransformerConfig tiny;                 // 2 layers, width 64
//   hearth::TransformerConfig big = hearth::Llama31_8BShape();
//   absl::Status ok = hearth::ValidateTransformerConfig(big);

#ifndef HEARTH_EXEC_TRANSFORMER_CONFIG_H_
#define HEARTH_EXEC_TRANSFORMER_CONFIG_H_

#include <cstdint>

#include "absl/status/status.h"

namespace hearth {

// Element type of weights, activations and the KV pool.
enum class DType : uint8_t {
  kFloat32,
  // bfloat16 storage with float32 accumulation (CUDA executor only).
  kBFloat16,
};

int64_t DTypeBytes(DType dtype);

struct TransformerConfig {
  // Decoder layers. Must be in [1, 256].
  int32_t num_layers = 2;
  // Model width. Must equal num_heads * head_dim().
  int32_t hidden_size = 64;
  // Query heads. Must be >= 1 and divide hidden_size.
  int32_t num_heads = 4;
  // Key/value heads (grouped-query attention). Must divide num_heads.
  int32_t num_kv_heads = 2;
  // Width of the MLP's hidden layer. Must be >= 1.
  int32_t mlp_hidden = 128;
  // Vocabulary. Must be >= 2; token ids lie in [0, vocab_size).
  int32_t vocab_size = 256;
  // Rotary base (theta). Must be > 1.
  float rope_theta = 10000.0f;
  // RMSNorm epsilon. Must be > 0.
  float rms_eps = 1e-5f;
  // Seed of the weights. Any value; same seed, same weights.
  uint64_t seed = 1;
  // Storage type. The CPU reference executor supports kFloat32 only.
  DType dtype = DType::kFloat32;

  // hidden_size / num_heads; the head dimension must be even (rotary pairs).
  int32_t head_dim() const { return hidden_size / num_heads; }
};

// The Llama-3.1-8B shape (32 layers, width 4096, 32 heads, 8 KV heads, MLP
// 14336, vocabulary 128256, rope theta 500000) in bfloat16, random weights.
// For timing only: the weights are not Llama's.
TransformerConfig Llama31_8BShape();

// InvalidArgument naming the first field out of range and what is allowed.
absl::Status ValidateTransformerConfig(const TransformerConfig& config);

// Bytes one token's K and V take over all layers in the KV pool.
int64_t KvBytesPerToken(const TransformerConfig& config);

// Number of weight parameters (embedding and output projection included).
int64_t ParameterCount(const TransformerConfig& config);

}  // namespace hearth

#endif  // HEARTH_EXEC_TRANSFORMER_CONFIG_H_

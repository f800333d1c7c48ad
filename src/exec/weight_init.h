// File: src/exec/weight_init.h
//
// The weights of Hearth's test transformer, defined element by element by a
// counter-based hash of (seed, tensor, index). Header-only and usable from
// CUDA device code, so the CPU reference and the CUDA executor produce the
// same values without shipping arrays between them, and a GPU can fill 8B
// parameters in milliseconds. Integer arithmetic only until the final scaling,
// which is one correctly rounded float operation (exact for norms), so host
// and device agree bit for bit. Not part of the public API.

#ifndef HEARTH_EXEC_WEIGHT_INIT_H_
#define HEARTH_EXEC_WEIGHT_INIT_H_

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define HEARTH_HOST_DEVICE __host__ __device__
#else
#define HEARTH_HOST_DEVICE
#endif

namespace hearth::exec_internal {

// What a weight tensor is; decides its shape and its value distribution.
enum class WeightKind : uint32_t {
  kEmbedding = 0,  // [vocab][hidden], uniform in [-1, 1)
  kFinalNorm = 1,  // [hidden], 1 + u/8
  kLmHead = 2,     // [hidden][vocab]
  kAttnNorm = 3,   // per layer [hidden]
  kWq = 4,         // [hidden][heads * head_dim]
  kWk = 5,         // [hidden][kv_heads * head_dim]
  kWv = 6,         // [hidden][kv_heads * head_dim]
  kWo = 7,         // [heads * head_dim][hidden]
  kMlpNorm = 8,    // [hidden]
  kWGate = 9,      // [hidden][mlp_hidden]
  kWUp = 10,       // [hidden][mlp_hidden]
  kWDown = 11,     // [mlp_hidden][hidden]
};

// A tensor's identity in the hash: global tensors use layer -1.
HEARTH_HOST_DEVICE inline uint64_t TensorKey(WeightKind kind, int32_t layer) {
  return (static_cast<uint64_t>(layer + 1) << 8) |
         static_cast<uint64_t>(kind);
}

HEARTH_HOST_DEVICE inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) with 24 bits; exact in float.
HEARTH_HOST_DEVICE inline float HashUniform(uint64_t seed, uint64_t tensor,
                                            uint64_t index) {
  const uint64_t h = SplitMix64(SplitMix64(seed ^ (tensor * 0xD6E8FEB86659FD93ull)) + index);
  const float u01 = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
  return 2.0f * u01 - 1.0f;
}

HEARTH_HOST_DEVICE inline bool IsNormKind(WeightKind kind) {
  return kind == WeightKind::kFinalNorm || kind == WeightKind::kAttnNorm ||
         kind == WeightKind::kMlpNorm;
}

// The multiplier applied to HashUniform for a matrix with `fan_in` inputs:
// sqrt(3 / fan_in) keeps each output's variance near its input's. Computed on
// the host and passed to device code so both use the same float.
inline float MatrixScale(int64_t fan_in) {
  return static_cast<float>(std::sqrt(3.0 / static_cast<double>(fan_in)));
}

// Element `index` of the tensor. `scale` is MatrixScale(fan_in) for matrices,
// 1 for the embedding, ignored for norms (1 + u/8: the product is exact, so a
// fused multiply-add gives the same result as separate operations).
HEARTH_HOST_DEVICE inline float WeightValue(uint64_t seed, WeightKind kind,
                                            int32_t layer, uint64_t index,
                                            float scale) {
  const float u = HashUniform(seed, TensorKey(kind, layer), index);
  if (IsNormKind(kind)) return 1.0f + 0.125f * u;
  return u * scale;
}

}  // namespace hearth::exec_internal

#endif  // HEARTH_EXEC_WEIGHT_INIT_H_

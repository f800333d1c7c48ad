// File: src/exec/model_math.h
//
// The float32 building blocks of the reference transformer on the CPU, and
// its weights. Every function computes each output row with the same sequence
// of float operations whatever the number of rows, so a position's result
// never depends on what it is batched with. Not part of the public API.

#ifndef HEARTH_EXEC_MODEL_MATH_H_
#define HEARTH_EXEC_MODEL_MATH_H_

#include <cstdint>
#include <vector>

#include "hearth/common/ids.h"
#include "hearth/exec/transformer_config.h"

namespace hearth::exec_internal {

struct CpuLayerWeights {
  std::vector<float> attn_norm;  // [hidden]
  std::vector<float> wq;         // [hidden][heads * head_dim]
  std::vector<float> wk;         // [hidden][kv_heads * head_dim]
  std::vector<float> wv;         // [hidden][kv_heads * head_dim]
  std::vector<float> wo;         // [heads * head_dim][hidden]
  std::vector<float> mlp_norm;   // [hidden]
  std::vector<float> w_gate;     // [hidden][mlp_hidden]
  std::vector<float> w_up;       // [hidden][mlp_hidden]
  std::vector<float> w_down;     // [mlp_hidden][hidden]
};

struct CpuModelWeights {
  std::vector<float> embedding;   // [vocab][hidden]
  std::vector<float> final_norm;  // [hidden]
  std::vector<float> lm_head;     // [hidden][vocab]
  std::vector<CpuLayerWeights> layers;
};

// REQUIRES: ValidateTransformerConfig(config).ok().
CpuModelWeights MakeCpuWeights(const TransformerConfig& config);

// Rotary cos/sin per (position, pair), computed in double and rounded once,
// so every executor can share the same table. Pairs are (i, i + head_dim/2).
struct RopeTable {
  int32_t half = 0;        // head_dim / 2
  std::vector<float> cos;  // [positions][half]
  std::vector<float> sin;  // [positions][half]
};
RopeTable MakeRopeTable(int32_t head_dim, float theta, int32_t positions);

// y[r] = x[r] / rms(x[r]) * w, rows of `width`.
void RmsNormRows(const float* x, int64_t rows, int32_t width, const float* w,
                 float eps, float* y);
// y[rows][out] = x[rows][in] * w[in][out].
void MatMulRows(const float* x, int64_t rows, int32_t in, const float* w,
                int32_t out, float* y);
// Rotates `heads` consecutive vectors of head_dim at `position`.
void ApplyRope(float* v, int32_t heads, int32_t head_dim, int32_t position,
               const RopeTable& rope);
// gate[i] = silu(gate[i]) * up[i].
void SiluGate(float* gate, const float* up, int64_t n);
// Index of the largest value, the lowest index among equals.
TokenId ArgmaxLowest(const float* values, int32_t n);

}  // namespace hearth::exec_internal

#endif  // HEARTH_EXEC_MODEL_MATH_H_

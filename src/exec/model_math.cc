// Float32 reference kernels and weights (see model_math.h).

#include "exec/model_math.h"

#include <cmath>

#include "exec/weight_init.h"

namespace hearth::exec_internal {
namespace {

std::vector<float> FillTensor(const TransformerConfig& c, WeightKind kind,
                              int32_t layer, int64_t count, int64_t fan_in) {
  const float scale = fan_in > 0 ? MatrixScale(fan_in) : 1.0f;
  std::vector<float> t(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    t[i] = WeightValue(c.seed, kind, layer, static_cast<uint64_t>(i), scale);
  }
  return t;
}

}  // namespace

CpuModelWeights MakeCpuWeights(const TransformerConfig& c) {
  const int64_t d = c.hidden_size;
  const int64_t q = int64_t{c.num_heads} * c.head_dim();
  const int64_t kv = int64_t{c.num_kv_heads} * c.head_dim();
  const int64_t f = c.mlp_hidden;
  CpuModelWeights w;
  w.embedding = FillTensor(c, WeightKind::kEmbedding, -1, c.vocab_size * d, 0);
  w.final_norm = FillTensor(c, WeightKind::kFinalNorm, -1, d, 0);
  w.lm_head = FillTensor(c, WeightKind::kLmHead, -1, d * c.vocab_size, d);
  w.layers.resize(c.num_layers);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    CpuLayerWeights& L = w.layers[l];
    L.attn_norm = FillTensor(c, WeightKind::kAttnNorm, l, d, 0);
    L.wq = FillTensor(c, WeightKind::kWq, l, d * q, d);
    L.wk = FillTensor(c, WeightKind::kWk, l, d * kv, d);
    L.wv = FillTensor(c, WeightKind::kWv, l, d * kv, d);
    L.wo = FillTensor(c, WeightKind::kWo, l, q * d, q);
    L.mlp_norm = FillTensor(c, WeightKind::kMlpNorm, l, d, 0);
    L.w_gate = FillTensor(c, WeightKind::kWGate, l, d * f, d);
    L.w_up = FillTensor(c, WeightKind::kWUp, l, d * f, d);
    L.w_down = FillTensor(c, WeightKind::kWDown, l, f * d, f);
  }
  return w;
}

RopeTable MakeRopeTable(int32_t head_dim, float theta, int32_t positions) {
  RopeTable r;
  r.half = head_dim / 2;
  r.cos.resize(static_cast<size_t>(positions) * r.half);
  r.sin.resize(r.cos.size());
  for (int32_t i = 0; i < r.half; ++i) {
    const double inv_freq =
        std::pow(static_cast<double>(theta), -2.0 * i / head_dim);
    for (int32_t p = 0; p < positions; ++p) {
      const double angle = p * inv_freq;
      r.cos[static_cast<size_t>(p) * r.half + i] = static_cast<float>(std::cos(angle));
      r.sin[static_cast<size_t>(p) * r.half + i] = static_cast<float>(std::sin(angle));
    }
  }
  return r;
}

void RmsNormRows(const float* x, int64_t rows, int32_t width, const float* w,
                 float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * width;
    float* yr = y + r * width;
    float ss = 0.0f;
    for (int32_t i = 0; i < width; ++i) ss += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(width) + eps);
    for (int32_t i = 0; i < width; ++i) yr[i] = xr[i] * inv * w[i];
  }
}

void MatMulRows(const float* x, int64_t rows, int32_t in, const float* w,
                int32_t out, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * in;
    float* yr = y + r * out;
    for (int32_t j = 0; j < out; ++j) yr[j] = 0.0f;
    // k outer, j inner: every y[r][j] sums its products in k order, and the
    // inner loop vectorises across j without reassociating any sum.
    for (int32_t k = 0; k < in; ++k) {
      const float xk = xr[k];
      const float* wk = w + static_cast<int64_t>(k) * out;
      for (int32_t j = 0; j < out; ++j) yr[j] += xk * wk[j];
    }
  }
}

void ApplyRope(float* v, int32_t heads, int32_t head_dim, int32_t position,
               const RopeTable& rope) {
  const int32_t half = rope.half;
  const float* c = rope.cos.data() + static_cast<size_t>(position) * half;
  const float* s = rope.sin.data() + static_cast<size_t>(position) * half;
  for (int32_t h = 0; h < heads; ++h) {
    float* x = v + static_cast<int64_t>(h) * head_dim;
    for (int32_t i = 0; i < half; ++i) {
      const float a = x[i];
      const float b = x[i + half];
      x[i] = a * c[i] - b * s[i];
      x[i + half] = b * c[i] + a * s[i];
    }
  }
}

void SiluGate(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

TokenId ArgmaxLowest(const float* values, int32_t n) {
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i) {
    if (values[i] > values[best]) best = i;
  }
  return best;
}

}  // namespace hearth::exec_internal

// Unpaged reference forward pass (see dense_reference.h).

#include "dense_reference.h"

#include <algorithm>
#include <cmath>

#include "exec/model_math.h"

namespace hearth::testing {
namespace {

using exec_internal::CpuModelWeights;

class DenseModel {
 public:
  explicit DenseModel(const TransformerConfig& c)
      : c_(c),
        w_(exec_internal::MakeCpuWeights(c)),
        rope_(exec_internal::MakeRopeTable(c.head_dim(), c.rope_theta, 4096)),
        k_(c.num_layers),
        v_(c.num_layers) {}

  // Feeds one token at the next position; returns the logits after it.
  std::vector<float> Step(TokenId token) {
    const int32_t d = c_.hidden_size, hd = c_.head_dim();
    const int32_t qw = c_.num_heads * hd, kvw = c_.num_kv_heads * hd;
    const int32_t p = length_++;
    std::vector<float> x(w_.embedding.begin() + int64_t{token} * d,
                         w_.embedding.begin() + int64_t{token + 1} * d);
    std::vector<float> h(d), q(qw), k(kvw), v(kvw), attn(qw), tmp(d),
        gate(c_.mlp_hidden), up(c_.mlp_hidden);
    for (int32_t l = 0; l < c_.num_layers; ++l) {
      const auto& w = w_.layers[l];
      exec_internal::RmsNormRows(x.data(), 1, d, w.attn_norm.data(), c_.rms_eps, h.data());
      exec_internal::MatMulRows(h.data(), 1, d, w.wq.data(), qw, q.data());
      exec_internal::MatMulRows(h.data(), 1, d, w.wk.data(), kvw, k.data());
      exec_internal::MatMulRows(h.data(), 1, d, w.wv.data(), kvw, v.data());
      exec_internal::ApplyRope(q.data(), c_.num_heads, hd, p, rope_);
      exec_internal::ApplyRope(k.data(), c_.num_kv_heads, hd, p, rope_);
      k_[l].insert(k_[l].end(), k.begin(), k.end());
      v_[l].insert(v_[l].end(), v.begin(), v.end());
      Attend(l, q, attn);
      exec_internal::MatMulRows(attn.data(), 1, qw, w.wo.data(), d, tmp.data());
      for (int32_t i = 0; i < d; ++i) x[i] += tmp[i];
      exec_internal::RmsNormRows(x.data(), 1, d, w.mlp_norm.data(), c_.rms_eps, h.data());
      exec_internal::MatMulRows(h.data(), 1, d, w.w_gate.data(), c_.mlp_hidden, gate.data());
      exec_internal::MatMulRows(h.data(), 1, d, w.w_up.data(), c_.mlp_hidden, up.data());
      exec_internal::SiluGate(gate.data(), up.data(), c_.mlp_hidden);
      exec_internal::MatMulRows(gate.data(), 1, c_.mlp_hidden, w.w_down.data(), d, tmp.data());
      for (int32_t i = 0; i < d; ++i) x[i] += tmp[i];
    }
    exec_internal::RmsNormRows(x.data(), 1, d, w_.final_norm.data(), c_.rms_eps, h.data());
    hidden_ = h;
    std::vector<float> logits(c_.vocab_size);
    exec_internal::MatMulRows(h.data(), 1, d, w_.lm_head.data(), c_.vocab_size,
                              logits.data());
    return logits;
  }

  // The final-normed hidden state of the last position fed.
  const std::vector<float>& hidden() const { return hidden_; }

 private:
  void Attend(int32_t l, const std::vector<float>& q, std::vector<float>& out) {
    const int32_t hd = c_.head_dim(), kvw = c_.num_kv_heads * hd;
    const int32_t group = c_.num_heads / c_.num_kv_heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    std::vector<float> s(length_);
    for (int32_t h = 0; h < c_.num_heads; ++h) {
      const int32_t kh = h / group;
      float m = -INFINITY;
      for (int32_t j = 0; j < length_; ++j) {
        float dot = 0.0f;
        for (int32_t e = 0; e < hd; ++e) {
          dot += q[h * hd + e] * k_[l][int64_t{j} * kvw + kh * hd + e];
        }
        s[j] = dot * scale;
        m = std::max(m, s[j]);
      }
      float sum = 0.0f;
      float* o = out.data() + h * hd;
      std::fill(o, o + hd, 0.0f);
      for (int32_t j = 0; j < length_; ++j) {
        const float w = std::exp(s[j] - m);
        sum += w;
        for (int32_t e = 0; e < hd; ++e) {
          o[e] += w * v_[l][int64_t{j} * kvw + kh * hd + e];
        }
      }
      for (int32_t e = 0; e < hd; ++e) o[e] *= 1.0f / sum;
    }
  }

  TransformerConfig c_;
  CpuModelWeights w_;
  exec_internal::RopeTable rope_;
  std::vector<std::vector<float>> k_, v_;  // [layer][position * kv width]
  int32_t length_ = 0;
  std::vector<float> hidden_;
};

}  // namespace

DenseResult DenseGreedy(const TransformerConfig& config,
                        const std::vector<TokenId>& prompt, int32_t new_tokens) {
  DenseModel model(config);
  DenseResult r;
  std::vector<float> logits;
  for (TokenId t : prompt) logits = model.Step(t);
  for (int32_t i = 0; i < new_tokens; ++i) {
    const TokenId next = exec_internal::ArgmaxLowest(logits.data(), config.vocab_size);
    r.tokens.push_back(next);
    r.logits.push_back(logits);
    if (i + 1 < new_tokens) logits = model.Step(next);
  }
  return r;
}

std::vector<float> DenseEmbedding(const TransformerConfig& config,
                                  const std::vector<TokenId>& prompt, bool mean) {
  DenseModel model(config);
  std::vector<float> sum(static_cast<size_t>(config.hidden_size), 0.0f);
  for (TokenId t : prompt) {
    (void)model.Step(t);
    if (!mean) continue;
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += model.hidden()[i];
  }
  std::vector<float> v = mean ? sum : model.hidden();
  if (mean) {
    for (float& x : v) x /= static_cast<float>(prompt.size());
  }
  float norm = 0.0f;
  for (float x : v) norm += x * x;
  norm = std::sqrt(norm);
  for (float& x : v) x /= norm;
  return v;
}

}  // namespace hearth::testing

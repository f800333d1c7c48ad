// Device-resident weights of the CUDA executor (see device_model.h).

#include "exec/cuda/device_model.h"

#include "exec/model_math.h"
#include "exec/weight_init.h"

namespace hearth::cuda_internal {
namespace {

using exec_internal::WeightKind;

// Carves 256-byte aligned pieces out of one allocation (or just counts them
// when base is null).
class Carver {
 public:
  explicit Carver(char* base) : base_(base) {}
  void* Take(int64_t bytes) {
    void* p = base_ == nullptr ? nullptr : base_ + used_;
    used_ += (bytes + 255) / 256 * 256;
    return p;
  }
  int64_t used() const { return used_; }

 private:
  char* base_;
  int64_t used_ = 0;
};

struct Sizes {
  int64_t d, q, kv, f, v, e;
};

Sizes SizesOf(const TransformerConfig& c) {
  return {c.hidden_size, int64_t{c.num_heads} * c.head_dim(),
          int64_t{c.num_kv_heads} * c.head_dim(), c.mlp_hidden, c.vocab_size,
          DTypeBytes(c.dtype)};
}

// Lays the tensors out; returns the bytes used.
int64_t Layout(const TransformerConfig& c, int32_t max_positions, char* base,
               void** embedding, void** final_norm, void** lm_head,
               std::vector<DeviceLayer>* layers, float** cos, float** sin) {
  const Sizes s = SizesOf(c);
  Carver carve(base);
  *embedding = carve.Take(s.v * s.d * s.e);
  *final_norm = carve.Take(s.d * s.e);
  *lm_head = carve.Take(s.d * s.v * s.e);
  layers->resize(c.num_layers);
  for (DeviceLayer& L : *layers) {
    L.attn_norm = carve.Take(s.d * s.e);
    L.wqkv = carve.Take(s.d * (s.q + 2 * s.kv) * s.e);
    L.wo = carve.Take(s.q * s.d * s.e);
    L.mlp_norm = carve.Take(s.d * s.e);
    L.wgu = carve.Take(s.d * 2 * s.f * s.e);
    L.wdown = carve.Take(s.f * s.d * s.e);
  }
  const int64_t rope = int64_t{max_positions} * (c.head_dim() / 2) * 4;
  *cos = static_cast<float*>(carve.Take(rope));
  *sin = static_cast<float*>(carve.Take(rope));
  return carve.used();
}

}  // namespace

int64_t DeviceModel::BytesNeeded(const TransformerConfig& c,
                                 int32_t max_positions) {
  void *a, *b, *d;
  float *cos, *sin;
  std::vector<DeviceLayer> layers;
  return Layout(c, max_positions, nullptr, &a, &b, &d, &layers, &cos, &sin);
}

absl::StatusOr<std::unique_ptr<DeviceModel>> DeviceModel::Create(
    const TransformerConfig& c, int32_t max_positions, cudaStream_t stream) {
  std::unique_ptr<DeviceModel> m(new DeviceModel());
  m->type_ = c.dtype == DType::kFloat32 ? ElemType::kF32 : ElemType::kBF16;
  absl::Status s = m->arena_.Allocate(BytesNeeded(c, max_positions));
  if (!s.ok()) return s;
  Layout(c, max_positions, m->arena_.as<char>(), &m->embedding_,
         &m->final_norm_, &m->lm_head_, &m->layers_, &m->rope_cos_,
         &m->rope_sin_);
  s = m->Fill(c, stream);
  if (!s.ok()) return s;
  const exec_internal::RopeTable rope =
      exec_internal::MakeRopeTable(c.head_dim(), c.rope_theta, max_positions);
  const size_t rope_bytes = rope.cos.size() * sizeof(float);
  // Synchronous copies: the host vectors die at the end of this function.
  HEARTH_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(m->rope_cos_, rope.cos.data(), rope_bytes, cudaMemcpyHostToDevice));
  HEARTH_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(m->rope_sin_, rope.sin.data(), rope_bytes, cudaMemcpyHostToDevice));
  HEARTH_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return m;
}

absl::Status DeviceModel::Fill(const TransformerConfig& c, cudaStream_t stream) {
  const Sizes s = SizesOf(c);
  auto fill = [&](void* dst, int64_t rows, int64_t cols, int64_t ld,
                  int64_t offset, WeightKind kind, int32_t layer,
                  int64_t fan_in) -> absl::Status {
    const float scale = fan_in > 0 ? exec_internal::MatrixScale(fan_in) : 1.0f;
    return CudaStatus(
        LaunchFillWeights(type_, dst, rows, cols, ld, offset, c.seed,
                          static_cast<uint32_t>(kind), layer, scale, stream),
        "LaunchFillWeights", __FILE__, __LINE__);
  };
  absl::Status st = fill(embedding_, s.v, s.d, s.d, 0, WeightKind::kEmbedding, -1, 0);
  if (st.ok()) st = fill(final_norm_, 1, s.d, s.d, 0, WeightKind::kFinalNorm, -1, 0);
  if (st.ok()) st = fill(lm_head_, s.d, s.v, s.v, 0, WeightKind::kLmHead, -1, s.d);
  const int64_t qkv = s.q + 2 * s.kv;
  for (int32_t l = 0; st.ok() && l < c.num_layers; ++l) {
    const DeviceLayer& L = layers_[l];
    st = fill(L.attn_norm, 1, s.d, s.d, 0, WeightKind::kAttnNorm, l, 0);
    if (st.ok()) st = fill(L.wqkv, s.d, s.q, qkv, 0, WeightKind::kWq, l, s.d);
    if (st.ok()) st = fill(L.wqkv, s.d, s.kv, qkv, s.q, WeightKind::kWk, l, s.d);
    if (st.ok()) st = fill(L.wqkv, s.d, s.kv, qkv, s.q + s.kv, WeightKind::kWv, l, s.d);
    if (st.ok()) st = fill(L.wo, s.q, s.d, s.d, 0, WeightKind::kWo, l, s.q);
    if (st.ok()) st = fill(L.mlp_norm, 1, s.d, s.d, 0, WeightKind::kMlpNorm, l, 0);
    if (st.ok()) st = fill(L.wgu, s.d, s.f, 2 * s.f, 0, WeightKind::kWGate, l, s.d);
    if (st.ok()) st = fill(L.wgu, s.d, s.f, 2 * s.f, s.f, WeightKind::kWUp, l, s.d);
    if (st.ok()) st = fill(L.wdown, s.f, s.d, s.d, 0, WeightKind::kWDown, l, s.f);
  }
  return st;
}

}  // namespace hearth::cuda_internal

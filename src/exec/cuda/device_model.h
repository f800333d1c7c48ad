// File: src/exec/cuda/device_model.h
//
// The transformer's weights in device memory, generated on the device from
// the same hash as the CPU reference (weight_init.h), so the two executors
// hold the same model without copying arrays. Q/K/V projections are stored
// as one [hidden][q + 2 kv] matrix and gate/up as one [hidden][2 mlp] matrix,
// so each is one matrix product. Also holds the rotary table (the CPU
// reference's table, uploaded). Not part of the public API.

#ifndef HEARTH_EXEC_CUDA_DEVICE_MODEL_H_
#define HEARTH_EXEC_CUDA_DEVICE_MODEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/cuda/device_buffer.h"
#include "exec/cuda/kernels.h"
#include "hearth/exec/transformer_config.h"

namespace hearth::cuda_internal {

struct DeviceLayer {
  void* attn_norm = nullptr;  // [hidden]
  void* wqkv = nullptr;       // [hidden][(heads + 2 kv_heads) * head_dim]
  void* wo = nullptr;         // [heads * head_dim][hidden]
  void* mlp_norm = nullptr;   // [hidden]
  void* wgu = nullptr;        // [hidden][2 * mlp_hidden]: gate, then up
  void* wdown = nullptr;      // [mlp_hidden][hidden]
};

class DeviceModel {
 public:
  // Bytes Create() allocates for `config` and `max_positions`.
  static int64_t BytesNeeded(const TransformerConfig& config,
                             int32_t max_positions);
  // REQUIRES: ValidateTransformerConfig(config).ok(); the current device set.
  static absl::StatusOr<std::unique_ptr<DeviceModel>> Create(
      const TransformerConfig& config, int32_t max_positions,
      cudaStream_t stream);

  ElemType type() const { return type_; }
  const void* embedding() const { return embedding_; }
  const void* final_norm() const { return final_norm_; }
  const void* lm_head() const { return lm_head_; }
  const DeviceLayer& layer(int32_t l) const { return layers_[l]; }
  const float* rope_cos() const { return rope_cos_; }
  const float* rope_sin() const { return rope_sin_; }
  int64_t bytes() const { return arena_.bytes(); }

 private:
  DeviceModel() = default;
  absl::Status Fill(const TransformerConfig& c, cudaStream_t stream);

  ElemType type_ = ElemType::kF32;
  Buffer arena_;
  void* embedding_ = nullptr;
  void* final_norm_ = nullptr;
  void* lm_head_ = nullptr;
  std::vector<DeviceLayer> layers_;
  float* rope_cos_ = nullptr;
  float* rope_sin_ = nullptr;
};

}  // namespace hearth::cuda_internal

#endif  // HEARTH_EXEC_CUDA_DEVICE_MODEL_H_

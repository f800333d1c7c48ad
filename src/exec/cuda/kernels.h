// File: src/exec/cuda/kernels.h
//
// Host-side launchers of the CUDA executor's kernels (kernels.cu). Plain C++
// declarations, so the executor's host code compiles with the C++ compiler.
// Each launcher enqueues on `stream` and returns cudaGetLastError() after the
// launch. Activations are float32; weights and the KV pool are `ElemType`;
// matrix products (cuBLAS) take ElemType inputs and write float32.
// Not part of the public API.

#ifndef HEARTH_EXEC_CUDA_KERNELS_H_
#define HEARTH_EXEC_CUDA_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "exec/kv_layout.h"

namespace hearth::cuda_internal {

enum class ElemType : uint8_t { kF32, kBF16 };

inline int64_t ElemBytes(ElemType t) { return t == ElemType::kF32 ? 4 : 2; }

// Writes weight tensor (kind, layer) of `rows` x `cols` into dst[r * ld +
// col_offset + c], element index r * cols + c of the hash (weight_init.h).
cudaError_t LaunchFillWeights(ElemType t, void* dst, int64_t rows, int64_t cols,
                              int64_t ld, int64_t col_offset, uint64_t seed,
                              uint32_t kind, int32_t layer, float scale,
                              cudaStream_t stream);

// x[r][:] = table[tokens[r]][:].
cudaError_t LaunchEmbedding(ElemType t, const int32_t* tokens, int32_t rows,
                            const void* table, int32_t width, float* x,
                            cudaStream_t stream);

// y[r] = x[row_index ? row_index[r] : r] / rms * w, for r < rows.
cudaError_t LaunchRmsNorm(ElemType t, const float* x, const int32_t* row_index,
                          int32_t rows, const void* w, int32_t width, float eps,
                          void* y, cudaStream_t stream);

struct RopeKvParams {
  // [rows][(num_heads + 2 * num_kv_heads) * head_dim]: q, k, v per row. q is
  // rotated in place; rotated k and v are written into the pool.
  float* qkv = nullptr;
  const int32_t* positions = nullptr;  // [rows]
  const int32_t* row_block = nullptr;  // [rows] physical block of the position
  const float* cos = nullptr;          // [positions][head_dim / 2]
  const float* sin = nullptr;
  int32_t rows = 0;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  exec_internal::KvLayout layout;
  int32_t layer = 0;
  void* pool = nullptr;
};
cudaError_t LaunchRopeKvWrite(ElemType t, const RopeKvParams& p,
                              cudaStream_t stream);

struct AttentionParams {
  const float* q = nullptr;   // row r, head h at q[r * q_row_stride + h * head_dim]
  int64_t q_row_stride = 0;
  const int32_t* row_table = nullptr;  // [rows] offset of the row's table in `tables`
  const int32_t* row_len = nullptr;    // [rows] positions attended: [0, len)
  const int32_t* tables = nullptr;     // flat block tables
  const void* pool = nullptr;
  exec_internal::KvLayout layout;
  int32_t layer = 0;
  int32_t rows = 0;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  float scale = 1.0f;
  // The KV range of each row is cut into `splits` ranges of pages_per_split
  // pages, one thread block each; a second kernel combines them.
  int32_t splits = 1;
  int32_t pages_per_split = 1;
  float* part_out = nullptr;  // [rows][num_heads][splits][head_dim]
  float* part_m = nullptr;    // [rows][num_heads][splits]
  float* part_l = nullptr;
  void* out = nullptr;        // ElemType [rows][num_heads * head_dim]
};
// How to cut the rows' KV ranges: enough thread blocks to fill the device
// (4 per multiprocessor) even for one long sequence, no split shorter than 4
// pages, and at most `row_split_capacity` (rows x splits) partial results.
inline void ChooseAttentionSplits(int32_t rows, int32_t num_kv_heads,
                                  int32_t max_pages, int32_t multiprocessors,
                                  int64_t row_split_capacity,
                                  AttentionParams* p) {
  const int64_t base = int64_t{rows} * num_kv_heads;
  int64_t splits = (4 * int64_t{multiprocessors} + base - 1) / base;
  const int64_t longest = max_pages / 4 > 1 ? max_pages / 4 : 1;
  if (splits > longest) splits = longest;
  if (splits > row_split_capacity / rows) splits = row_split_capacity / rows;
  if (splits < 1) splits = 1;
  const int64_t per = (max_pages + splits - 1) / splits;
  p->pages_per_split = static_cast<int32_t>(per > 0 ? per : 1);
  p->splits = static_cast<int32_t>((max_pages + p->pages_per_split - 1) /
                                   p->pages_per_split);
  if (p->splits < 1) p->splits = 1;
}

// Whether the attention kernels support this head size and GQA group.
bool AttentionShapeSupported(ElemType t, int32_t head_dim, int32_t group);
cudaError_t LaunchPagedAttention(ElemType t, const AttentionParams& p,
                                 cudaStream_t stream);

// act[r][i] = silu(gu[r][i]) * gu[r][f + i], gu float [rows][2f].
cudaError_t LaunchSiluGate(ElemType t, const float* gu, int32_t rows, int32_t f,
                           void* act, cudaStream_t stream);

// out[r] = argmax of logits[r][0, vocab), lowest index on ties.
cudaError_t LaunchArgmax(const float* logits, int32_t rows, int32_t vocab,
                         int32_t* out, cudaStream_t stream);

}  // namespace hearth::cuda_internal

#endif  // HEARTH_EXEC_CUDA_KERNELS_H_

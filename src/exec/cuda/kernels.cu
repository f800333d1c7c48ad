// CUDA kernels of the CUDA executor (see kernels.h). Activations are float32;
// weights and the KV pool are float or bfloat16, converted on load.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "exec/cuda/kernels.h"
#include "exec/weight_init.h"

namespace hearth::cuda_internal {
namespace {

using exec_internal::KvLayout;
using bf16 = __nv_bfloat16;

constexpr int kThreads = 256;
constexpr unsigned kFull = 0xffffffffu;

template <typename T>
__device__ __forceinline__ float ToF(T v);
template <>
__device__ __forceinline__ float ToF<float>(float v) { return v; }
template <>
__device__ __forceinline__ float ToF<bf16>(bf16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T FromF(float v);
template <>
__device__ __forceinline__ float FromF<float>(float v) { return v; }
template <>
__device__ __forceinline__ bf16 FromF<bf16>(float v) { return __float2bfloat16_rn(v); }

// 16-byte vector loads of K/V.
template <typename T>
struct Vec;
template <>
struct Vec<float> {
  static constexpr int kN = 4;
  __device__ __forceinline__ static void Load(const float* p, float* out) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
  }
};
template <>
struct Vec<bf16> {
  static constexpr int kN = 8;
  __device__ __forceinline__ static void Load(const bf16* p, float* out) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __bfloat1622float2(h[i]);
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  }
};

// Sum over the block; blockDim.x a multiple of 32, at most 1024.
__device__ float BlockSum(float v) {
  __shared__ float partial[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x >> 5;
    float t = lane < warps ? partial[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(kFull, t, o);
    if (lane == 0) partial[0] = t;
  }
  __syncthreads();
  const float total = partial[0];
  __syncthreads();
  return total;
}

int GridFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 8192 ? (blocks > 0 ? blocks : 1) : 8192);
}

// ---- Weights.

template <typename T>
__global__ void FillWeightsKernel(T* dst, int64_t rows, int64_t cols,
                                  int64_t ld, int64_t col_offset, uint64_t seed,
                                  uint32_t kind, int32_t layer, float scale) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / cols, c = i - r * cols;
    dst[r * ld + col_offset + c] = FromF<T>(exec_internal::WeightValue(
        seed, static_cast<exec_internal::WeightKind>(kind), layer,
        static_cast<uint64_t>(i), scale));
  }
}

// ---- Per-row kernels.

template <typename T>
__global__ void EmbeddingKernel(const int32_t* tokens, const T* table,
                                int32_t width, float* x) {
  const int64_t r = blockIdx.x;
  const T* e = table + int64_t{tokens[r]} * width;
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    x[r * width + i] = ToF(e[i]);
  }
}

template <typename T>
__global__ void RmsNormKernel(const float* x, const int32_t* row_index,
                              const T* w, int32_t width, float eps, T* y) {
  const int64_t out_row = blockIdx.x;
  const int64_t in_row = row_index != nullptr ? row_index[out_row] : out_row;
  const float* xr = x + in_row * width;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < width; i += blockDim.x) ss += xr[i] * xr[i];
  ss = BlockSum(ss);
  const float inv = 1.0f / sqrtf(ss / static_cast<float>(width) + eps);
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    y[out_row * width + i] = FromF<T>(xr[i] * inv * ToF(w[i]));
  }
}

template <typename T>
__global__ void RopeKvWriteKernel(RopeKvParams p) {
  const int64_t r = blockIdx.x;
  const int hd = p.head_dim, half = hd / 2;
  const int pos = p.positions[r];
  float* q = p.qkv + r * int64_t{p.num_heads + 2 * p.num_kv_heads} * hd;
  const float* k = q + p.num_heads * hd;
  const float* v = k + p.num_kv_heads * hd;
  const float* c = p.cos + int64_t{pos} * half;
  const float* s = p.sin + int64_t{pos} * half;
  const int64_t block = p.row_block[r];
  const int slot = pos % p.layout.block_size;
  T* pool = static_cast<T*>(p.pool);
  for (int i = threadIdx.x; i < p.num_heads * half; i += blockDim.x) {
    float* x = q + (i / half) * hd;
    const int j = i % half;
    const float a = x[j], b = x[j + half];
    x[j] = a * c[j] - b * s[j];
    x[j + half] = b * c[j] + a * s[j];
  }
  for (int i = threadIdx.x; i < p.num_kv_heads * half; i += blockDim.x) {
    const int h = i / half, j = i % half;
    const float a = k[h * hd + j], b = k[h * hd + j + half];
    T* dst = pool + p.layout.Offset(block, p.layer, 0, h, slot);
    dst[j] = FromF<T>(a * c[j] - b * s[j]);
    dst[j + half] = FromF<T>(b * c[j] + a * s[j]);
  }
  for (int i = threadIdx.x; i < p.num_kv_heads * hd; i += blockDim.x) {
    const int h = i / hd, j = i % hd;
    pool[p.layout.Offset(block, p.layer, 1, h, slot) + j] = FromF<T>(v[i]);
  }
}

template <typename T>
__global__ void SiluGateKernel(const float* gu, int32_t rows, int32_t f, T* act) {
  const int64_t n = int64_t{rows} * f;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / f, j = i - r * f;
    const float g = gu[r * 2 * f + j];
    act[i] = FromF<T>(g / (1.0f + expf(-g)) * gu[r * 2 * f + f + j]);
  }
}

__device__ __forceinline__ bool Better(float v, int i, float best, int best_i) {
  return v > best || (v == best && i < best_i);
}

__global__ void ArgmaxKernel(const float* logits, int32_t vocab, int32_t* out) {
  __shared__ float vals[32];
  __shared__ int idxs[32];
  const float* row = logits + int64_t{blockIdx.x} * vocab;
  float best = -INFINITY;
  int best_i = INT_MAX;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    if (Better(row[i], i, best, best_i)) { best = row[i]; best_i = i; }
  }
  for (int o = 16; o > 0; o >>= 1) {
    const float v = __shfl_xor_sync(kFull, best, o);
    const int vi = __shfl_xor_sync(kFull, best_i, o);
    if (Better(v, vi, best, best_i)) { best = v; best_i = vi; }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) { vals[warp] = best; idxs[warp] = best_i; }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < (blockDim.x >> 5); ++w) {
      if (Better(vals[w], idxs[w], best, best_i)) { best = vals[w]; best_i = idxs[w]; }
    }
    // All NaN: no index was ever better; report 0 as the CPU does.
    out[blockIdx.x] = best_i == INT_MAX ? 0 : best_i;
  }
}

// ---- Paged attention.
//
// Grid (rows, kv_heads, splits); 4 warps. A block computes, for the G query
// heads sharing one KV head, softmax(q K^T * scale) V over the positions of
// its split, unnormalised, with its running max and sum. Each token's head
// vector is read by head_dim / VEC lanes with 16-byte loads, so a warp reads
// 32 * 16 bytes of K (and of V) per iteration, contiguous within a page; each
// K/V byte of the split is read once for all G heads.

constexpr int kAttnWarps = 4;
constexpr int kUnroll = 4;

template <int G>
__device__ __forceinline__ void Merge(float& m, float& l, float* acc, float mo,
                                      float lo, const float* acco, int n) {
  const float mn = fmaxf(m, mo);
  const float a = m == -INFINITY ? 0.0f : expf(m - mn);
  const float b = mo == -INFINITY ? 0.0f : expf(mo - mn);
  l = l * a + lo * b;
  for (int e = 0; e < n; ++e) acc[e] = acc[e] * a + acco[e] * b;
  m = mn;
}

template <typename T, int G>
__global__ void __launch_bounds__(kAttnWarps * 32)
    PagedAttentionKernel(AttentionParams p) {
  constexpr int kVec = Vec<T>::kN;
  const int row = blockIdx.x, kvh = blockIdx.y, split = blockIdx.z;
  const int hd = p.head_dim;
  const int lpt = hd / kVec;  // lanes per token (power of two <= 32)
  const int tpw = 32 / lpt;   // tokens per warp iteration
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int sub = lane % lpt, grp = lane / lpt;
  extern __shared__ float smem[];
  float* q_s = smem;                          // [G][hd]
  float* acc_s = q_s + G * hd;                // [warps][G][hd]
  float* ml_s = acc_s + kAttnWarps * G * hd;  // [warps][G][2]

  for (int i = threadIdx.x; i < G * hd; i += blockDim.x) {
    q_s[i] = p.q[row * p.q_row_stride + int64_t{kvh * G} * hd + i];
  }
  __syncthreads();
  float qv[G][kVec];
#pragma unroll
  for (int g = 0; g < G; ++g) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) qv[g][e] = q_s[g * hd + sub * kVec + e];
  }

  const int len = p.row_len[row];
  const int bs = p.layout.block_size;
  const int num_pages = (len + bs - 1) / bs;
  const int page_begin = split * p.pages_per_split;
  const int page_end = min(num_pages, page_begin + p.pages_per_split);
  const int tok_begin = page_begin * bs;
  const int tok_end = min(len, page_end * bs);
  const int32_t* table = p.tables + p.row_table[row];
  const T* pool = static_cast<const T*>(p.pool);

  float m[G], l[G], acc[G][kVec];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.0f;
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc[g][e] = 0.0f;
  }

  const int step = kAttnWarps * tpw * kUnroll;
  for (int base = tok_begin + warp * tpw * kUnroll; base < tok_end; base += step) {
    float kf[kUnroll][kVec], vf[kUnroll][kVec];
    bool valid[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int pos = base + u * tpw + grp;
      valid[u] = pos < tok_end;
      if (valid[u]) {
        const int64_t blk = table[pos / bs];
        const int slot = pos % bs;
        Vec<T>::Load(pool + p.layout.Offset(blk, p.layer, 0, kvh, slot) + sub * kVec, kf[u]);
        Vec<T>::Load(pool + p.layout.Offset(blk, p.layer, 1, kvh, slot) + sub * kVec, vf[u]);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e) kf[u][e] = vf[u][e] = 0.0f;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < kVec; ++e) dot += qv[g][e] * kf[u][e];
        for (int o = lpt / 2; o > 0; o >>= 1) dot += __shfl_xor_sync(kFull, dot, o);
        if (valid[u]) {
          const float s = dot * p.scale;
          const float one = 1.0f;
          Merge<G>(m[g], l[g], acc[g], s, one, vf[u], kVec);
        }
      }
    }
  }

  // Combine the token groups of the warp (lanes lpt apart), then the warps.
  for (int o = lpt; o < 32; o <<= 1) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const float mo = __shfl_xor_sync(kFull, m[g], o);
      const float lo = __shfl_xor_sync(kFull, l[g], o);
      float acco[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) acco[e] = __shfl_xor_sync(kFull, acc[g][e], o);
      Merge<G>(m[g], l[g], acc[g], mo, lo, acco, kVec);
    }
  }
  if (grp == 0) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        acc_s[(warp * G + g) * hd + sub * kVec + e] = acc[g][e];
      }
      if (sub == 0) {
        ml_s[(warp * G + g) * 2] = m[g];
        ml_s[(warp * G + g) * 2 + 1] = l[g];
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < G * hd; i += blockDim.x) {
    const int g = i / hd, d = i % hd;
    float mm = -INFINITY;
    for (int w = 0; w < kAttnWarps; ++w) mm = fmaxf(mm, ml_s[(w * G + g) * 2]);
    float sum_l = 0.0f, out = 0.0f;
    if (mm != -INFINITY) {
      for (int w = 0; w < kAttnWarps; ++w) {
        const float mw = ml_s[(w * G + g) * 2];
        const float f = mw == -INFINITY ? 0.0f : expf(mw - mm);
        sum_l += f * ml_s[(w * G + g) * 2 + 1];
        out += f * acc_s[(w * G + g) * hd + d];
      }
    }
    const int64_t head = int64_t{row} * p.num_heads + kvh * G + g;
    p.part_out[(head * p.splits + split) * hd + d] = out;
    if (d == 0) {
      p.part_m[head * p.splits + split] = mm;
      p.part_l[head * p.splits + split] = sum_l;
    }
  }
}

// Grid (rows, heads), head_dim threads: merges the splits and normalises.
template <typename T>
__global__ void AttentionCombineKernel(AttentionParams p) {
  const int64_t head = int64_t{blockIdx.x} * p.num_heads + blockIdx.y;
  const int d = threadIdx.x;
  const float* m = p.part_m + head * p.splits;
  const float* l = p.part_l + head * p.splits;
  float mm = -INFINITY;
  for (int s = 0; s < p.splits; ++s) mm = fmaxf(mm, m[s]);
  float num = 0.0f, den = 0.0f;
  for (int s = 0; s < p.splits; ++s) {
    if (m[s] == -INFINITY) continue;
    const float f = expf(m[s] - mm);
    num += f * p.part_out[(head * p.splits + s) * p.head_dim + d];
    den += f * l[s];
  }
  static_cast<T*>(p.out)[head * p.head_dim + d] = FromF<T>(num / den);
}

template <typename T, int G>
cudaError_t LaunchAttentionG(const AttentionParams& p, cudaStream_t stream) {
  const size_t smem =
      sizeof(float) * (G * p.head_dim * (1 + kAttnWarps) + kAttnWarps * G * 2);
  const dim3 grid(p.rows, p.num_kv_heads, p.splits);
  PagedAttentionKernel<T, G><<<grid, kAttnWarps * 32, smem, stream>>>(p);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  AttentionCombineKernel<T><<<dim3(p.rows, p.num_heads), p.head_dim, 0, stream>>>(p);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchAttentionT(const AttentionParams& p, cudaStream_t stream) {
  switch (p.num_heads / p.num_kv_heads) {
    case 1: return LaunchAttentionG<T, 1>(p, stream);
    case 2: return LaunchAttentionG<T, 2>(p, stream);
    case 4: return LaunchAttentionG<T, 4>(p, stream);
    case 8: return LaunchAttentionG<T, 8>(p, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

bool AttentionShapeSupported(ElemType t, int32_t head_dim, int32_t group) {
  const int vec = t == ElemType::kF32 ? 4 : 8;
  if (head_dim % vec != 0) return false;
  const int lpt = head_dim / vec;
  const bool pow2 = lpt >= 1 && (lpt & (lpt - 1)) == 0;
  return pow2 && lpt <= 32 && head_dim <= 256 &&
         (group == 1 || group == 2 || group == 4 || group == 8);
}

cudaError_t LaunchFillWeights(ElemType t, void* dst, int64_t rows, int64_t cols,
                              int64_t ld, int64_t col_offset, uint64_t seed,
                              uint32_t kind, int32_t layer, float scale,
                              cudaStream_t stream) {
  const int grid = GridFor(rows * cols);
  if (t == ElemType::kF32) {
    FillWeightsKernel<float><<<grid, kThreads, 0, stream>>>(
        static_cast<float*>(dst), rows, cols, ld, col_offset, seed, kind, layer, scale);
  } else {
    FillWeightsKernel<bf16><<<grid, kThreads, 0, stream>>>(
        static_cast<bf16*>(dst), rows, cols, ld, col_offset, seed, kind, layer, scale);
  }
  return cudaGetLastError();
}

cudaError_t LaunchEmbedding(ElemType t, const int32_t* tokens, int32_t rows,
                            const void* table, int32_t width, float* x,
                            cudaStream_t stream) {
  if (t == ElemType::kF32) {
    EmbeddingKernel<float><<<rows, kThreads, 0, stream>>>(
        tokens, static_cast<const float*>(table), width, x);
  } else {
    EmbeddingKernel<bf16><<<rows, kThreads, 0, stream>>>(
        tokens, static_cast<const bf16*>(table), width, x);
  }
  return cudaGetLastError();
}

cudaError_t LaunchRmsNorm(ElemType t, const float* x, const int32_t* row_index,
                          int32_t rows, const void* w, int32_t width, float eps,
                          void* y, cudaStream_t stream) {
  if (t == ElemType::kF32) {
    RmsNormKernel<float><<<rows, kThreads, 0, stream>>>(
        x, row_index, static_cast<const float*>(w), width, eps, static_cast<float*>(y));
  } else {
    RmsNormKernel<bf16><<<rows, kThreads, 0, stream>>>(
        x, row_index, static_cast<const bf16*>(w), width, eps, static_cast<bf16*>(y));
  }
  return cudaGetLastError();
}

cudaError_t LaunchRopeKvWrite(ElemType t, const RopeKvParams& p,
                              cudaStream_t stream) {
  if (t == ElemType::kF32) {
    RopeKvWriteKernel<float><<<p.rows, kThreads, 0, stream>>>(p);
  } else {
    RopeKvWriteKernel<bf16><<<p.rows, kThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

cudaError_t LaunchPagedAttention(ElemType t, const AttentionParams& p,
                                 cudaStream_t stream) {
  if (!AttentionShapeSupported(t, p.head_dim, p.num_heads / p.num_kv_heads) ||
      p.rows < 1 || p.splits < 1 || p.pages_per_split < 1) {
    return cudaErrorInvalidValue;
  }
  return t == ElemType::kF32 ? LaunchAttentionT<float>(p, stream)
                             : LaunchAttentionT<bf16>(p, stream);
}

cudaError_t LaunchSiluGate(ElemType t, const float* gu, int32_t rows, int32_t f,
                           void* act, cudaStream_t stream) {
  const int grid = GridFor(int64_t{rows} * f);
  if (t == ElemType::kF32) {
    SiluGateKernel<float><<<grid, kThreads, 0, stream>>>(gu, rows, f, static_cast<float*>(act));
  } else {
    SiluGateKernel<bf16><<<grid, kThreads, 0, stream>>>(gu, rows, f, static_cast<bf16*>(act));
  }
  return cudaGetLastError();
}

cudaError_t LaunchArgmax(const float* logits, int32_t rows, int32_t vocab,
                         int32_t* out, cudaStream_t stream) {
  ArgmaxKernel<<<rows, kThreads, 0, stream>>>(logits, vocab, out);
  return cudaGetLastError();
}

}  // namespace hearth::cuda_internal

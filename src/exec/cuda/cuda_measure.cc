// Device measurements for benchmarks and calibration: decode paged-attention
// timing and copy bandwidths (see cuda_executor.h).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "exec/cuda/cuda_status.h"
#include "exec/cuda/device_buffer.h"
#include "exec/cuda/kernels.h"
#include "exec/weight_init.h"
#include "hearth/exec/cuda_executor.h"

namespace hearth {
namespace {

using cuda_internal::Buffer;
using cuda_internal::ElemType;

// Stream and event pair released on every path out.
class Timer {
 public:
  ~Timer() {
    if (start_ != nullptr) (void)cudaEventDestroy(start_);
    if (stop_ != nullptr) (void)cudaEventDestroy(stop_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  absl::Status Init(int32_t device) {
    int count = 0;
    HEARTH_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count) {
      return absl::UnavailableError(absl::StrFormat(
          "CUDA device %d does not exist (%d devices)", device, count));
    }
    HEARTH_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    HEARTH_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    HEARTH_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start_));
    HEARTH_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop_));
    return absl::OkStatus();
  }
  absl::Status Start() {
    HEARTH_CUDA_RETURN_IF_ERROR(cudaEventRecord(start_, stream_));
    return absl::OkStatus();
  }
  // Seconds since Start(), after the stream drained.
  absl::StatusOr<double> Stop() {
    HEARTH_CUDA_RETURN_IF_ERROR(cudaEventRecord(stop_, stream_));
    HEARTH_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop_));
    float ms = 0;
    HEARTH_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }
  cudaStream_t stream() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace

absl::StatusOr<DecodeAttentionTiming> TimeDecodeAttention(
    const TransformerConfig& model, int32_t block_size, int32_t batch,
    int32_t context, int32_t iterations, int32_t device) {
  absl::Status s = ValidateTransformerConfig(model);
  if (!s.ok()) return s;
  const ElemType t = model.dtype == DType::kFloat32 ? ElemType::kF32 : ElemType::kBF16;
  const int32_t hd = model.head_dim();
  if (!cuda_internal::AttentionShapeSupported(t, hd, model.num_heads / model.num_kv_heads)) {
    return absl::InvalidArgumentError("model: head shape not supported by the CUDA kernels");
  }
  if (block_size < 1 || batch < 1 || context < 1 || iterations < 1 ||
      context > (1 << 24)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "block_size %d, batch %d, context %d, iterations %d: all must be >= 1 "
        "(context <= 2^24)",
        block_size, batch, context, iterations));
  }
  Timer timer;
  s = timer.Init(device);
  if (!s.ok()) return s;
  int sms = 1;
  HEARTH_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));

  // One layer's pool; sequence i's page j is block j * batch + i, so a
  // sequence's pages are spread over the whole pool as in a busy server.
  const exec_internal::KvLayout layout{1, model.num_kv_heads, block_size, hd};
  const int32_t pages = (context + block_size - 1) / block_size;
  const int64_t blocks = int64_t{pages} * batch;
  const int64_t e = cuda_internal::ElemBytes(t);
  Buffer pool, q, out, part_out, part_m, part_l, meta;
  const int64_t row_splits = std::max<int64_t>(2 * int64_t{batch}, 4096) * model.num_heads;
  s = pool.Allocate(blocks * layout.BlockElements() * e);
  if (s.ok()) s = q.Allocate(int64_t{batch} * model.num_heads * hd * 4);
  if (s.ok()) s = out.Allocate(int64_t{batch} * model.num_heads * hd * e);
  if (s.ok()) s = part_out.Allocate(row_splits * hd * 4);
  if (s.ok()) s = part_m.Allocate(row_splits * 4);
  if (s.ok()) s = part_l.Allocate(row_splits * 4);
  if (s.ok()) s = meta.Allocate((2 * int64_t{batch} + blocks) * 4);
  if (!s.ok()) return s;
  HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchFillWeights(
      t, pool.get(), 1, blocks * layout.BlockElements(), 0, 0, model.seed, 0, 0,
      1.0f, timer.stream()));
  HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchFillWeights(
      ElemType::kF32, q.get(), 1, int64_t{batch} * model.num_heads * hd, 0, 0,
      model.seed + 1, 0, 0, 1.0f, timer.stream()));
  std::vector<int32_t> h(2 * int64_t{batch} + blocks);
  for (int32_t i = 0; i < batch; ++i) {
    h[i] = i * pages;          // row_table
    h[batch + i] = context;    // row_len
    for (int32_t j = 0; j < pages; ++j) {
      h[2 * int64_t{batch} + int64_t{i} * pages + j] = j * batch + i;
    }
  }
  HEARTH_CUDA_RETURN_IF_ERROR(cudaMemcpy(meta.get(), h.data(), h.size() * 4,
                                         cudaMemcpyHostToDevice));
  cuda_internal::AttentionParams p;
  p.q = q.as<float>();
  p.q_row_stride = int64_t{model.num_heads} * hd;
  p.row_table = meta.as<int32_t>();
  p.row_len = meta.as<int32_t>() + batch;
  p.tables = meta.as<int32_t>() + 2 * int64_t{batch};
  p.pool = pool.get();
  p.layout = layout;
  p.rows = batch;
  p.num_heads = model.num_heads;
  p.num_kv_heads = model.num_kv_heads;
  p.head_dim = hd;
  p.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  cuda_internal::ChooseAttentionSplits(batch, model.num_kv_heads, pages, sms,
                                       row_splits / model.num_heads, &p);
  p.part_out = part_out.as<float>();
  p.part_m = part_m.as<float>();
  p.part_l = part_l.as<float>();
  p.out = out.get();
  for (int i = 0; i < 3; ++i) {
    HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchPagedAttention(t, p, timer.stream()));
  }
  s = timer.Start();
  if (!s.ok()) return s;
  for (int i = 0; i < iterations; ++i) {
    HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchPagedAttention(t, p, timer.stream()));
  }
  absl::StatusOr<double> seconds = timer.Stop();
  if (!seconds.ok()) return seconds.status();
  DecodeAttentionTiming r;
  r.batch = batch;
  r.context = context;
  r.seconds = *seconds / iterations;
  r.bytes = double(batch) * context * model.num_kv_heads * hd * 2 * e;
  return r;
}

absl::StatusOr<double> MeasureDeviceCopyBandwidth(int64_t bytes,
                                                  int32_t iterations,
                                                  int32_t device) {
  if (bytes < 1 || iterations < 1) {
    return absl::InvalidArgumentError("bytes and iterations must be >= 1");
  }
  Timer timer;
  absl::Status s = timer.Init(device);
  Buffer a, b;
  if (s.ok()) s = a.Allocate(bytes);
  if (s.ok()) s = b.Allocate(bytes);
  if (!s.ok()) return s;
  HEARTH_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(a.get(), 1, bytes, timer.stream()));
  HEARTH_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(b.get(), a.get(), bytes,
                                              cudaMemcpyDeviceToDevice, timer.stream()));
  s = timer.Start();
  if (!s.ok()) return s;
  for (int i = 0; i < iterations; ++i) {
    HEARTH_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(b.get(), a.get(), bytes,
                                                cudaMemcpyDeviceToDevice, timer.stream()));
  }
  absl::StatusOr<double> seconds = timer.Stop();
  if (!seconds.ok()) return seconds.status();
  return 2.0 * double(bytes) * iterations / *seconds;
}

absl::StatusOr<double> MeasureHostToDeviceBandwidth(int64_t bytes,
                                                    int32_t iterations,
                                                    int32_t device) {
  if (bytes < 1 || iterations < 1) {
    return absl::InvalidArgumentError("bytes and iterations must be >= 1");
  }
  Timer timer;
  absl::Status s = timer.Init(device);
  Buffer host(/*pinned=*/true), dev;
  if (s.ok()) s = host.Allocate(bytes);
  if (s.ok()) s = dev.Allocate(bytes);
  if (!s.ok()) return s;
  std::memset(host.get(), 1, static_cast<size_t>(bytes));
  s = timer.Start();
  if (!s.ok()) return s;
  for (int i = 0; i < iterations; ++i) {
    HEARTH_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dev.get(), host.get(), bytes,
                                                cudaMemcpyHostToDevice, timer.stream()));
  }
  absl::StatusOr<double> seconds = timer.Stop();
  if (!seconds.ok()) return seconds.status();
  return double(bytes) * iterations / *seconds;
}

}  // namespace hearth

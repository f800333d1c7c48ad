// File: hearth/exec/cuda_executor.h
//
// `CudaExecutor` runs StepPlans on an NVIDIA GPU: the same transformer as
// CpuReferenceExecutor (same config, same seed, same weights), with weights
// and a paged KV pool in device memory, a pinned host pool for swap, kernels
// for embedding, RMSNorm, rotary + K/V writes into pages, paged attention
// (decode and chunked prefill: each position attends to every earlier
// position through its block table, causal within the chunk), SiLU-gated
// MLP, greedy sampling; matrix products through cuBLAS. Float32 (compare
// with the CPU reference) or bfloat16 (Llama31_8BShape(), for timing).
//
// No CUDA type appears here. The library target is `hearth_cuda` (link it
// next to `hearth`); it exists in every build. Built without CUDA
// (HEARTH_WITH_CUDA=OFF), or on a machine without a usable GPU, Create()
// returns Unavailable, so callers and tests can skip cleanly.
//
// Every CUDA and cuBLAS call is checked; a failure becomes an absl::Status
// naming the call. After such a device error the executor's KV state is
// unspecified: destroy it and create a new one. Malformed plans are rejected
// like the CPU executor does (same checks, shared code), before any device
// work.
//
// Attention runs one paged kernel for every position, decode or prefill:
// each query row reads its K/V pages (split over thread blocks for long
// contexts and merged). Prefill rows therefore re-read shared pages (mostly
// from L2) instead of being tiled FlashAttention-style; correct, but not the
// fastest possible prefill.
//
// Thread-safety: none; one engine thread calls Execute(). Execute() returns
// after the step's work has finished on the device.
//
// Example:
//   hearth::CudaExecutorOptions options;
//   options.model = hearth::Llama31_8BShape();
//   options.kv.num_device_blocks = 8192;
//   absl::StatusOr<std::unique_ptr<hearth::StepExecutor>> executor =
//       hearth::CreateCudaExecutor(options);
//   if (absl::IsUnavailable(executor.status())) { /* no GPU: skip */ }

#ifndef HEARTH_EXEC_CUDA_EXECUTOR_H_
#define HEARTH_EXEC_CUDA_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hearth/exec/executor_kv_config.h"
#include "hearth/exec/step_executor.h"
#include "hearth/exec/transformer_config.h"

namespace hearth {

struct CudaExecutorOptions {
  // The model. dtype kFloat32 or kBFloat16; head_dim a power of two in
  // [8, 256] (128 at most in float32); at most 8 query heads per KV head.
  TransformerConfig model;
  ExecutorKvConfig kv;
  // The ModelId the executor serves; sequences naming another model fail.
  ModelId model_id = ModelId(0);
  // When >= 0, sampling this token ends the request (FinishReason::kStopToken).
  TokenId stop_token = -1;
  // CUDA device ordinal.
  int32_t device = 0;
  // Capacity of one step; plans beyond it fail whole (InvalidArgument). Must
  // be >= the scheduler's max_batched_tokens and max_running.
  int32_t max_batched_tokens = 2048;
  int32_t max_sequences = 256;
  // Copy the sampled rows' logits to the host after each step (last_logits()).
  bool keep_logits = false;
  // Fill every activation buffer with NaN before each step, so an output
  // element a kernel forgets to write shows up (tests).
  bool poison_activations = false;
};

// Whether this build contains the CUDA executor (HEARTH_WITH_CUDA=ON).
bool CudaSupportCompiled();

struct CudaDeviceInfo {
  std::string name;
  int32_t multiprocessors = 0;
  int32_t compute_capability = 0;  // major * 10 + minor
  int64_t total_memory_bytes = 0;
};

// Unavailable when built without CUDA or when `device` does not exist.
absl::StatusOr<CudaDeviceInfo> GetCudaDeviceInfo(int32_t device = 0);

class CudaExecutor : public StepExecutor {
 public:
  // Unavailable without CUDA or device; InvalidArgument for bad options;
  // ResourceExhausted when weights, pools and buffers do not fit the device.
  static absl::StatusOr<std::unique_ptr<CudaExecutor>> Create(
      const CudaExecutorOptions& options);
  ~CudaExecutor() override;

  // Same order of effects as CpuReferenceExecutor::Execute().
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override;

  // Logits of the last step's sampled sequences, plan order, vocab_size each;
  // empty unless options.keep_logits.
  const std::vector<float>& last_logits() const;
  size_t num_live_sequences() const;
  const CudaExecutorOptions& options() const;
  // Device memory held: weights, KV pool and step buffers.
  int64_t device_bytes() const;

 private:
  class Impl;
  explicit CudaExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// CudaExecutor::Create() as a plain StepExecutor.
absl::StatusOr<std::unique_ptr<StepExecutor>> CreateCudaExecutor(
    const CudaExecutorOptions& options);

// ---- Measurements for benchmarks and calibration (GPU only).

struct DecodeAttentionTiming {
  int32_t batch = 0;
  int32_t context = 0;
  // Mean over the timed launches, one layer.
  double seconds = 0;
  // K and V bytes the kernel must read: batch * context * kv_heads *
  // head_dim * 2 * dtype bytes.
  double bytes = 0;
  double bytes_per_second() const { return seconds > 0 ? bytes / seconds : 0; }
};

// Times the decode paged-attention kernels (one query per sequence, every
// sequence `context` positions long, pages scattered over a pool) for one
// layer of `model`, averaged over `iterations` launches after a warm-up.
absl::StatusOr<DecodeAttentionTiming> TimeDecodeAttention(
    const TransformerConfig& model, int32_t block_size, int32_t batch,
    int32_t context, int32_t iterations, int32_t device = 0);

// Device-to-device copy bandwidth, counting bytes read plus bytes written
// (the convention of bandwidthTest and of STREAM's copy).
absl::StatusOr<double> MeasureDeviceCopyBandwidth(int64_t bytes,
                                                  int32_t iterations,
                                                  int32_t device = 0);
// Pinned host-to-device copy bandwidth in bytes per second.
absl::StatusOr<double> MeasureHostToDeviceBandwidth(int64_t bytes,
                                                    int32_t iterations,
                                                    int32_t device = 0);

}  // namespace hearth

#endif  // HEARTH_EXEC_CUDA_EXECUTOR_H_

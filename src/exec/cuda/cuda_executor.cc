// The CUDA executor: plan bookkeeping (shared with the CPU reference), block
// copies, and the batched forward pass on the device (see cuda_executor.h).

#include "hearth/exec/cuda_executor.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_format.h"
#include "hearth/exec/step_outcome_fill.h"
#include "exec/cuda/cuda_status.h"
#include "exec/cuda/device_buffer.h"
#include "exec/cuda/device_model.h"
#include "exec/cuda/kernels.h"
#include "exec/kv_layout.h"
#include "exec/paged_step.h"
#include "exec/sequence_tables.h"

namespace hearth {

using cuda_internal::Buffer;
using cuda_internal::DeviceModel;
using cuda_internal::ElemType;
using exec_internal::BeginPagedStep;
using exec_internal::CopyKind;
using exec_internal::FillPagedOutcome;
using exec_internal::KvLayout;
using exec_internal::PreparedSequence;

namespace {

absl::Status ValidateOptions(const CudaExecutorOptions& o) {
  absl::Status s = ValidateTransformerConfig(o.model);
  if (!s.ok()) return s;
  const ElemType t =
      o.model.dtype == DType::kFloat32 ? ElemType::kF32 : ElemType::kBF16;
  const int32_t group = o.model.num_heads / o.model.num_kv_heads;
  if (!cuda_internal::AttentionShapeSupported(t, o.model.head_dim(), group)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model: head_dim %d with %d query heads per KV head is not supported "
        "by the CUDA attention kernels (allowed: head_dim a power of two in "
        "[8, 256], at most 128 in float32; 1, 2, 4 or 8 heads per KV head)",
        o.model.head_dim(), group));
  }
  s = ValidateExecutorKvConfig(o.kv);
  if (!s.ok()) return s;
  if (o.max_batched_tokens < 1 || o.max_batched_tokens > (1 << 20) ||
      o.max_sequences < 1 || o.max_sequences > o.max_batched_tokens) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "max_batched_tokens %d / max_sequences %d are invalid (allowed: "
        "max_batched_tokens in [1, 2^20], max_sequences in [1, "
        "max_batched_tokens])",
        o.max_batched_tokens, o.max_sequences));
  }
  return ValidateStopToken(o.stop_token, o.model.vocab_size);
}

// Step buffers on the device, sized for the executor's capacity.
struct Activations {
  Buffer x, xn, qkv, attn, gu, act, logits, argmax, part_out, part_m, part_l;
  Buffer meta;  // int32 step metadata, see Meta
};

// Offsets (in int32 elements) of the step metadata in one upload.
struct Meta {
  int64_t tokens, positions, row_block, row_table, row_len, sample_rows,
      tables, total;
};

}  // namespace

class CudaExecutor::Impl {
 public:
  explicit Impl(const CudaExecutorOptions& o)
      : options_(o),
        type_(o.model.dtype == DType::kFloat32 ? ElemType::kF32 : ElemType::kBF16),
        tables_({.block_size = o.kv.block_size,
                 .num_device_blocks = o.kv.num_device_blocks,
                 .num_host_blocks = o.kv.num_host_blocks,
                 .max_positions = o.kv.max_positions,
                 .vocab_size = o.model.vocab_size,
                 .model = o.model_id}),
        layout_{o.model.num_layers, o.model.num_kv_heads, o.kv.block_size,
                o.model.head_dim()},
        host_pool_(/*pinned=*/true),
        host_meta_(/*pinned=*/true),
        host_tokens_(/*pinned=*/true),
        host_logits_(/*pinned=*/true) {}
  ~Impl() {
    if (cublas_ != nullptr) (void)cublasDestroy(cublas_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }

  absl::Status Init();
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome);

  const CudaExecutorOptions options_;
  std::vector<float> last_logits_;
  exec_internal::SequenceTables& tables() { return tables_; }
  int64_t device_bytes() const;

 private:
  int64_t BlockBytes() const {
    return layout_.BlockElements() * cuda_internal::ElemBytes(type_);
  }
  int64_t TableCapacity() const {
    return int64_t{options_.max_sequences} *
           ((options_.kv.max_positions + options_.kv.block_size - 1) /
            options_.kv.block_size);
  }
  int64_t RowSplitCapacity() const {
    return std::max<int64_t>(2 * int64_t{options_.max_batched_tokens}, 4096);
  }
  Meta MetaLayout(int64_t rows, int64_t samples, int64_t tables) const;
  absl::Status CopyBlocks(const std::vector<BlockCopy>& copies,
                          exec_internal::CopyKind kind);
  absl::Status Gemm(const void* w, const void* x, float* y, int32_t rows,
                    int32_t in, int32_t out, float beta);
  absl::Status Poison();
  // InvalidArgument when `plan` exceeds the step capacity the executor was
  // created for.
  absl::Status CheckCapacity(const StepPlan& plan) const;
  // Writes the step metadata of the prepared sequences into host_meta_;
  // returns the longest attended length.
  int32_t WriteMeta(const StepPlan& plan,
                    const std::vector<PreparedSequence>& prep, const Meta& meta);
  // Uploads the metadata, runs the forward pass and queues the sampled
  // tokens (and logits) back to the host.
  absl::Status RunRows(const Meta& meta, int32_t rows, int32_t samples,
                       int32_t max_len);
  absl::Status Forward(const Meta& meta, int32_t rows, int32_t samples,
                       int32_t max_len);

  const ElemType type_;
  exec_internal::SequenceTables tables_;
  KvLayout layout_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  int32_t multiprocessors_ = 1;
  std::unique_ptr<DeviceModel> model_;
  Buffer pool_;
  Buffer host_pool_;
  Activations act_;
  Buffer host_meta_;
  Buffer host_tokens_;
  Buffer host_logits_;
};

Meta CudaExecutor::Impl::MetaLayout(int64_t rows, int64_t samples,
                                    int64_t tables) const {
  Meta m;
  m.tokens = 0;
  m.positions = m.tokens + rows;
  m.row_block = m.positions + rows;
  m.row_table = m.row_block + rows;
  m.row_len = m.row_table + rows;
  m.sample_rows = m.row_len + rows;
  m.tables = m.sample_rows + samples;
  m.total = m.tables + tables;
  return m;
}

absl::Status CudaExecutor::Impl::Init() {
  const CudaExecutorOptions& o = options_;
  int count = 0;
  HEARTH_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  if (o.device < 0 || o.device >= count) {
    return absl::UnavailableError(absl::StrFormat(
        "CUDA device %d does not exist (%d devices)", o.device, count));
  }
  HEARTH_CUDA_RETURN_IF_ERROR(cudaSetDevice(o.device));
  HEARTH_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(
      &multiprocessors_, cudaDevAttrMultiProcessorCount, o.device));
  const int64_t e = cuda_internal::ElemBytes(type_);
  const int64_t r = o.max_batched_tokens, sq = o.max_sequences;
  const int64_t d = o.model.hidden_size, f = o.model.mlp_hidden;
  const int64_t qw = int64_t{o.model.num_heads} * o.model.head_dim();
  const int64_t kvw = int64_t{o.model.num_kv_heads} * o.model.head_dim();
  const int64_t rs = RowSplitCapacity() * o.model.num_heads;
  const int64_t meta = MetaLayout(r, sq, TableCapacity()).total * 4;
  const int64_t pool = BlockBytes() * o.kv.num_device_blocks;
  const int64_t acts = r * d * (4 + e) + r * (qw + 2 * kvw) * 4 + r * qw * e +
                       r * 2 * f * 4 + r * f * e + sq * o.model.vocab_size * 4 +
                       sq * 4 + rs * o.model.head_dim() * 4 + 2 * rs * 4 + meta;
  const int64_t need =
      DeviceModel::BytesNeeded(o.model, o.kv.max_positions) + pool + acts;
  size_t free_bytes = 0, total_bytes = 0;
  HEARTH_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need > static_cast<int64_t>(free_bytes)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "CUDA executor needs %d bytes (weights, KV pool of %d blocks, step "
        "buffers) but device %d has %d free",
        need, o.kv.num_device_blocks, o.device, free_bytes));
  }
  HEARTH_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  HEARTH_CUBLAS_RETURN_IF_ERROR(cublasCreate(&cublas_));
  HEARTH_CUBLAS_RETURN_IF_ERROR(cublasSetStream(cublas_, stream_));
  absl::StatusOr<std::unique_ptr<DeviceModel>> model =
      DeviceModel::Create(o.model, o.kv.max_positions, stream_);
  if (!model.ok()) return model.status();
  model_ = *std::move(model);

  absl::Status s = pool_.Allocate(pool);
  if (s.ok()) s = host_pool_.Allocate(BlockBytes() * o.kv.num_host_blocks);
  if (s.ok()) s = act_.x.Allocate(r * d * 4);
  if (s.ok()) s = act_.xn.Allocate(r * d * e);
  if (s.ok()) s = act_.qkv.Allocate(r * (qw + 2 * kvw) * 4);
  if (s.ok()) s = act_.attn.Allocate(r * qw * e);
  if (s.ok()) s = act_.gu.Allocate(r * 2 * f * 4);
  if (s.ok()) s = act_.act.Allocate(r * f * e);
  if (s.ok()) s = act_.logits.Allocate(sq * o.model.vocab_size * 4);
  if (s.ok()) s = act_.argmax.Allocate(sq * 4);
  if (s.ok()) s = act_.part_out.Allocate(rs * o.model.head_dim() * 4);
  if (s.ok()) s = act_.part_m.Allocate(rs * 4);
  if (s.ok()) s = act_.part_l.Allocate(rs * 4);
  if (s.ok()) s = act_.meta.Allocate(meta);
  if (s.ok()) s = host_meta_.Allocate(meta);
  if (s.ok()) s = host_tokens_.Allocate(sq * 4);
  if (s.ok() && o.keep_logits) s = host_logits_.Allocate(sq * o.model.vocab_size * 4);
  if (!s.ok()) return s;
  // A fresh pool reads as zeros, never as stale data of another run.
  HEARTH_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(pool_.get(), 0, pool, stream_));
  HEARTH_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  return absl::OkStatus();
}

int64_t CudaExecutor::Impl::device_bytes() const {
  int64_t total = (model_ ? model_->bytes() : 0) + pool_.bytes();
  for (const Buffer* b : {&act_.x, &act_.xn, &act_.qkv, &act_.attn, &act_.gu,
                          &act_.act, &act_.logits, &act_.argmax, &act_.part_out,
                          &act_.part_m, &act_.part_l, &act_.meta}) {
    total += b->bytes();
  }
  return total;
}

absl::Status CudaExecutor::Impl::CopyBlocks(const std::vector<BlockCopy>& copies,
                                            CopyKind kind) {
  const void* from = kind == CopyKind::kSwapIn ? host_pool_.get() : pool_.get();
  void* to = kind == CopyKind::kSwapOut ? host_pool_.get() : pool_.get();
  const cudaMemcpyKind direction =
      kind == CopyKind::kSwapOut  ? cudaMemcpyDeviceToHost
      : kind == CopyKind::kSwapIn ? cudaMemcpyHostToDevice
                                  : cudaMemcpyDeviceToDevice;
  const int64_t n = BlockBytes();
  for (const BlockCopy& c : copies) {
    HEARTH_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        static_cast<char*>(to) + int64_t{c.target.value()} * n,
        static_cast<const char*>(from) + int64_t{c.source.value()} * n, n,
        direction, stream_));
  }
  return absl::OkStatus();
}

absl::Status CudaExecutor::Impl::Gemm(const void* w, const void* x, float* y,
                                      int32_t rows, int32_t in, int32_t out,
                                      float beta) {
  // Row-major y[rows][out] = x[rows][in] w[in][out] is, column-major,
  // y^T (out x rows) = w^T (out x in) * x^T (in x rows).
  const float alpha = 1.0f;
  const cudaDataType_t t = type_ == ElemType::kF32 ? CUDA_R_32F : CUDA_R_16BF;
  HEARTH_CUBLAS_RETURN_IF_ERROR(cublasGemmEx(
      cublas_, CUBLAS_OP_N, CUBLAS_OP_N, out, rows, in, &alpha, w, t, out, x, t,
      in, &beta, y, CUDA_R_32F, out, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return absl::OkStatus();
}

absl::Status CudaExecutor::Impl::Poison() {
  for (const Buffer* b : {&act_.x, &act_.xn, &act_.qkv, &act_.attn, &act_.gu,
                          &act_.act, &act_.logits, &act_.argmax, &act_.part_out,
                          &act_.part_m, &act_.part_l}) {
    // All-ones bytes are NaN in float32 and bfloat16 (and -1 in int32).
    HEARTH_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(b->get(), 0xFF, static_cast<size_t>(b->bytes()), stream_));
  }
  return absl::OkStatus();
}

absl::Status CudaExecutor::Impl::Forward(const Meta& meta, int32_t rows,
                                         int32_t samples, int32_t max_len) {
  const TransformerConfig& c = options_.model;
  const int32_t d = c.hidden_size, hd = c.head_dim(), f = c.mlp_hidden;
  const int32_t qw = c.num_heads * hd, kvw = c.num_kv_heads * hd;
  const int32_t* m = act_.meta.as<int32_t>();
  float* x = act_.x.as<float>();
  HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchEmbedding(
      type_, m + meta.tokens, rows, model_->embedding(), d, x, stream_));

  cuda_internal::RopeKvParams rope;
  rope.qkv = act_.qkv.as<float>();
  rope.positions = m + meta.positions;
  rope.row_block = m + meta.row_block;
  rope.cos = model_->rope_cos();
  rope.sin = model_->rope_sin();
  rope.rows = rows;
  rope.num_heads = c.num_heads;
  rope.num_kv_heads = c.num_kv_heads;
  rope.head_dim = hd;
  rope.layout = layout_;
  rope.pool = pool_.get();

  cuda_internal::AttentionParams at;
  at.q = act_.qkv.as<float>();
  at.q_row_stride = qw + 2 * kvw;
  at.row_table = m + meta.row_table;
  at.row_len = m + meta.row_len;
  at.tables = m + meta.tables;
  at.pool = pool_.get();
  at.layout = layout_;
  at.rows = rows;
  at.num_heads = c.num_heads;
  at.num_kv_heads = c.num_kv_heads;
  at.head_dim = hd;
  at.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int32_t bs = options_.kv.block_size;
  cuda_internal::ChooseAttentionSplits(rows, c.num_kv_heads,
                                       (max_len + bs - 1) / bs, multiprocessors_,
                                       RowSplitCapacity(), &at);
  at.part_out = act_.part_out.as<float>();
  at.part_m = act_.part_m.as<float>();
  at.part_l = act_.part_l.as<float>();
  at.out = act_.attn.get();

  for (int32_t l = 0; l < c.num_layers; ++l) {
    const cuda_internal::DeviceLayer& w = model_->layer(l);
    HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchRmsNorm(
        type_, x, nullptr, rows, w.attn_norm, d, c.rms_eps, act_.xn.get(), stream_));
    absl::Status s = Gemm(w.wqkv, act_.xn.get(), act_.qkv.as<float>(), rows, d,
                          qw + 2 * kvw, 0.0f);
    if (!s.ok()) return s;
    rope.layer = l;
    HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchRopeKvWrite(type_, rope, stream_));
    at.layer = l;
    HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchPagedAttention(type_, at, stream_));
    // Residual adds ride on the products: beta = 1 accumulates into x.
    s = Gemm(w.wo, act_.attn.get(), x, rows, qw, d, 1.0f);
    if (!s.ok()) return s;
    HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchRmsNorm(
        type_, x, nullptr, rows, w.mlp_norm, d, c.rms_eps, act_.xn.get(), stream_));
    s = Gemm(w.wgu, act_.xn.get(), act_.gu.as<float>(), rows, d, 2 * f, 0.0f);
    if (!s.ok()) return s;
    HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchSiluGate(
        type_, act_.gu.as<float>(), rows, f, act_.act.get(), stream_));
    s = Gemm(w.wdown, act_.act.get(), x, rows, f, d, 1.0f);
    if (!s.ok()) return s;
  }
  if (samples == 0) return absl::OkStatus();
  HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchRmsNorm(
      type_, x, m + meta.sample_rows, samples, model_->final_norm(), d,
      c.rms_eps, act_.xn.get(), stream_));
  absl::Status s = Gemm(model_->lm_head(), act_.xn.get(), act_.logits.as<float>(),
                        samples, d, c.vocab_size, 0.0f);
  if (!s.ok()) return s;
  HEARTH_CUDA_RETURN_IF_ERROR(cuda_internal::LaunchArgmax(
      act_.logits.as<float>(), samples, c.vocab_size, act_.argmax.as<int32_t>(),
      stream_));
  return absl::OkStatus();
}

absl::Status CudaExecutor::Impl::CheckCapacity(const StepPlan& plan) const {
  int64_t planned_tokens = 0;
  for (const ScheduledSequence& s : plan.sequences) planned_tokens += std::max(0, s.num_tokens);
  if (planned_tokens > options_.max_batched_tokens ||
      int64_t(plan.sequences.size()) > options_.max_sequences) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "step %d has %d tokens in %d sequences; this CUDA executor was "
        "created for at most %d tokens and %d sequences per step",
        plan.step, planned_tokens, plan.sequences.size(),
        options_.max_batched_tokens, options_.max_sequences));
  }
  return absl::OkStatus();
}

int32_t CudaExecutor::Impl::WriteMeta(const StepPlan& plan,
                                      const std::vector<PreparedSequence>& prep,
                                      const Meta& meta) {
  int32_t* h = host_meta_.as<int32_t>();
  int32_t row = 0, sample = 0, max_len = 0;
  int64_t table_at = 0;
  const int32_t bs = options_.kv.block_size;
  for (size_t i = 0; i < prep.size(); ++i) {
    if (!prep[i].error.empty()) continue;
    const ScheduledSequence& q = plan.sequences[i];
    const std::vector<BlockId>& table = *prep[i].table;
    for (size_t b = 0; b < table.size(); ++b) {
      h[meta.tables + table_at + b] = static_cast<int32_t>(table[b].value());
    }
    for (int32_t t = 0; t < q.num_tokens; ++t, ++row) {
      const int32_t pos = q.start_position + t;
      h[meta.tokens + row] = prep[i].Input(q, t);
      h[meta.positions + row] = pos;
      h[meta.row_block + row] = static_cast<int32_t>(table[pos / bs].value());
      h[meta.row_table + row] = static_cast<int32_t>(table_at);
      h[meta.row_len + row] = pos + 1;
      max_len = std::max(max_len, pos + 1);
    }
    if (q.sample) h[meta.sample_rows + sample++] = row - 1;
    table_at += int64_t(table.size());
  }
  return max_len;
}

absl::Status CudaExecutor::Impl::RunRows(const Meta& meta, int32_t rows,
                                         int32_t samples, int32_t max_len) {
  if (options_.poison_activations) {
    absl::Status s = Poison();
    if (!s.ok()) return s;
  }
  HEARTH_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(act_.meta.get(), host_meta_.get(),
                                              meta.total * 4,
                                              cudaMemcpyHostToDevice, stream_));
  absl::Status s = Forward(meta, rows, samples, max_len);
  if (!s.ok() || samples == 0) return s;
  HEARTH_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
      host_tokens_.get(), act_.argmax.get(), samples * 4,
      cudaMemcpyDeviceToHost, stream_));
  if (options_.keep_logits) {
    HEARTH_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        host_logits_.get(), act_.logits.get(),
        int64_t{samples} * options_.model.vocab_size * 4,
        cudaMemcpyDeviceToHost, stream_));
  }
  return absl::OkStatus();
}

absl::Status CudaExecutor::Impl::Execute(const StepPlan& plan,
                                         StepOutcome* outcome) {
  last_logits_.clear();
  // The host may use other devices between steps on this thread.
  HEARTH_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.device));
  absl::Status s = CheckCapacity(plan);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<PreparedSequence>> prepared = BeginPagedStep(
      plan, tables_,
      [&](const std::vector<BlockCopy>& copies, CopyKind kind) {
        return CopyBlocks(copies, kind);
      },
      outcome);
  if (!prepared.ok()) return prepared.status();
  // No pooling kernel yet: an embedding fails alone, with the reason,
  // instead of finishing without its vector.
  for (size_t i = 0; i < prepared->size(); ++i) {
    if (!plan.sequences[i].embed || !(*prepared)[i].error.empty()) continue;
    (*prepared)[i].error =
        "the CUDA executor computes no embeddings (RequestKind::kEmbed) yet; the CPU "
        "reference executor and the llama.cpp engine do";
  }
  // No encoder either: a photo's positions would be computed from its
  // placeholder ids, a wrong answer given as a right one.
  for (const EncoderInput& in : plan.encoder_inputs) {
    for (size_t i = 0; i < prepared->size(); ++i) {
      if (plan.sequences[i].id != in.id || !(*prepared)[i].error.empty()) continue;
      (*prepared)[i].error =
          "the CUDA executor runs no encoder (RequestSpec::encoder_spans) yet; the CPU "
          "reference executor does";
    }
  }
  const std::vector<PreparedSequence>& prep = *prepared;
  int32_t rows = 0, samples = 0;
  int64_t table_total = 0;
  for (size_t i = 0; i < prep.size(); ++i) {
    if (!prep[i].error.empty()) continue;
    rows += plan.sequences[i].num_tokens;
    samples += plan.sequences[i].sample ? 1 : 0;
    table_total += int64_t(prep[i].table->size());
  }
  if (table_total > TableCapacity()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "step %d: block tables total %d entries, more than the %d this "
        "executor holds (max_sequences * max_positions / block_size)",
        plan.step, table_total, TableCapacity()));
  }
  if (rows > 0) {
    const Meta meta = MetaLayout(rows, samples, table_total);
    s = RunRows(meta, rows, samples, WriteMeta(plan, prep, meta));
    if (!s.ok()) return s;
  }
  HEARTH_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  if (options_.keep_logits) {
    const float* lg = host_logits_.as<float>();
    last_logits_.assign(lg, lg + int64_t{samples} * options_.model.vocab_size);
  }
  const int32_t* tokens = host_tokens_.as<int32_t>();
  FillPagedOutcome(
      plan, prep, tables_, [&](int32_t sample) { return tokens[sample]; },
      options_.stop_token, outcome);
  return absl::OkStatus();
}

bool CudaSupportCompiled() { return true; }

absl::StatusOr<CudaDeviceInfo> GetCudaDeviceInfo(int32_t device) {
  int count = 0;
  HEARTH_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count) {
    return absl::UnavailableError(absl::StrFormat(
        "CUDA device %d does not exist (%d devices)", device, count));
  }
  cudaDeviceProp prop;
  HEARTH_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device));
  CudaDeviceInfo info;
  info.name = prop.name;
  info.multiprocessors = prop.multiProcessorCount;
  info.compute_capability = prop.major * 10 + prop.minor;
  info.total_memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  return info;
}

absl::StatusOr<std::unique_ptr<CudaExecutor>> CudaExecutor::Create(
    const CudaExecutorOptions& options) {
  absl::Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  auto impl = std::make_unique<Impl>(options);
  s = impl->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<CudaExecutor>(new CudaExecutor(std::move(impl)));
}

CudaExecutor::CudaExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaExecutor::~CudaExecutor() = default;

absl::Status CudaExecutor::Execute(const StepPlan& plan, StepOutcome* outcome) {
  if (outcome == nullptr) {
    return absl::InvalidArgumentError("Execute: outcome must not be null");
  }
  return impl_->Execute(plan, outcome);
}

const std::vector<float>& CudaExecutor::last_logits() const {
  return impl_->last_logits_;
}
size_t CudaExecutor::num_live_sequences() const { return impl_->tables().size(); }
const CudaExecutorOptions& CudaExecutor::options() const { return impl_->options_; }
int64_t CudaExecutor::device_bytes() const { return impl_->device_bytes(); }

absl::StatusOr<std::unique_ptr<StepExecutor>> CreateCudaExecutor(
    const CudaExecutorOptions& options) {
  absl::StatusOr<std::unique_ptr<CudaExecutor>> e = CudaExecutor::Create(options);
  if (!e.ok()) return e.status();
  return std::unique_ptr<StepExecutor>(*std::move(e));
}

}  // namespace hearth

// The CUDA executor's API in builds without CUDA (HEARTH_WITH_CUDA=OFF):
// everything reports Unavailable, so hosts and tests can link the same code
// everywhere and skip GPU work visibly.

#include "hearth/exec/cuda_executor.h"

namespace hearth {
namespace {

absl::Status NotBuilt() {
  return absl::UnavailableError(
      "Hearth was built without CUDA (HEARTH_WITH_CUDA=OFF or no nvcc found); "
      "the CUDA executor is not available");
}

}  // namespace

class CudaExecutor::Impl {
 public:
  CudaExecutorOptions options;
  std::vector<float> logits;
};

bool CudaSupportCompiled() { return false; }

absl::StatusOr<CudaDeviceInfo> GetCudaDeviceInfo(int32_t) { return NotBuilt(); }

absl::StatusOr<std::unique_ptr<CudaExecutor>> CudaExecutor::Create(
    const CudaExecutorOptions&) {
  return NotBuilt();
}
CudaExecutor::CudaExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaExecutor::~CudaExecutor() = default;
absl::Status CudaExecutor::Execute(const StepPlan&, StepOutcome*) { return NotBuilt(); }
const std::vector<float>& CudaExecutor::last_logits() const { return impl_->logits; }
size_t CudaExecutor::num_live_sequences() const { return 0; }
const CudaExecutorOptions& CudaExecutor::options() const { return impl_->options; }
int64_t CudaExecutor::device_bytes() const { return 0; }

absl::StatusOr<std::unique_ptr<StepExecutor>> CreateCudaExecutor(
    const CudaExecutorOptions&) {
  return NotBuilt();
}

absl::StatusOr<DecodeAttentionTiming> TimeDecodeAttention(
    const TransformerConfig&, int32_t, int32_t, int32_t, int32_t, int32_t) {
  return NotBuilt();
}
absl::StatusOr<double> MeasureDeviceCopyBandwidth(int64_t, int32_t, int32_t) {
  return NotBuilt();
}
absl::StatusOr<double> MeasureHostToDeviceBandwidth(int64_t, int32_t, int32_t) {
  return NotBuilt();
}

}  // namespace hearth

// File: src/exec/cuda/cuda_status.h
//
// CUDA runtime and cuBLAS results as absl::Status: every call of the CUDA
// executor goes through one of these macros, so a failure returns an error
// naming the call, the file and line, instead of being ignored. Not API.

#ifndef HEARTH_EXEC_CUDA_CUDA_STATUS_H_
#define HEARTH_EXEC_CUDA_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace hearth::cuda_internal {

inline absl::Status CudaStatus(cudaError_t e, const char* what,
                               const char* file, int line) {
  if (e == cudaSuccess) return absl::OkStatus();
  const std::string msg = absl::StrFormat("%s:%d: %s failed: %s (%s)", file,
                                          line, what, cudaGetErrorName(e),
                                          cudaGetErrorString(e));
  if (e == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(msg);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
      e == cudaErrorInvalidDevice) {
    return absl::UnavailableError(msg);
  }
  return absl::InternalError(msg);
}

inline absl::Status CublasStatus(cublasStatus_t s, const char* what,
                                 const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string msg = absl::StrFormat("%s:%d: %s failed: %s", file, line,
                                          what, cublasGetStatusString(s));
  if (s == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(msg);
  return absl::InternalError(msg);
}

}  // namespace hearth::cuda_internal

#define HEARTH_CUDA_RETURN_IF_ERROR(expr)                                  \
  do {                                                                     \
    ::absl::Status hearth_cuda_s_ = ::hearth::cuda_internal::CudaStatus(   \
        (expr), #expr, __FILE__, __LINE__);                                \
    if (!hearth_cuda_s_.ok()) return hearth_cuda_s_;                       \
  } while (0)

#define HEARTH_CUBLAS_RETURN_IF_ERROR(expr)                                \
  do {                                                                     \
    ::absl::Status hearth_cublas_s_ = ::hearth::cuda_internal::CublasStatus( \
        (expr), #expr, __FILE__, __LINE__);                                \
    if (!hearth_cublas_s_.ok()) return hearth_cublas_s_;                   \
  } while (0)

// After a kernel launch: launch-configuration errors surface here.
#define HEARTH_CUDA_RETURN_IF_LAUNCH_FAILED(what)                          \
  do {                                                                     \
    ::absl::Status hearth_cuda_s_ = ::hearth::cuda_internal::CudaStatus(   \
        cudaGetLastError(), what, __FILE__, __LINE__);                     \
    if (!hearth_cuda_s_.ok()) return hearth_cuda_s_;                       \
  } while (0)

#endif  // HEARTH_EXEC_CUDA_CUDA_STATUS_H_

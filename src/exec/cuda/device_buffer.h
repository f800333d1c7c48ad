// File: src/exec/cuda/device_buffer.h
//
// Owning handles for device and pinned host memory, freed on destruction.
// Allocation goes through Allocate(), which returns a Status instead of
// throwing or ignoring cudaMalloc's result. Not part of the public API.

#ifndef HEARTH_EXEC_CUDA_DEVICE_BUFFER_H_
#define HEARTH_EXEC_CUDA_DEVICE_BUFFER_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "exec/cuda/cuda_status.h"

namespace hearth::cuda_internal {

// Device memory (pinned == false) or page-locked host memory (pinned == true).
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(bool pinned) : pinned_(pinned) {}
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(pinned_, o.pinned_);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Reset(); }

  absl::Status Allocate(int64_t bytes) {
    Reset();
    if (bytes <= 0) return absl::OkStatus();
    if (pinned_) {
      HEARTH_CUDA_RETURN_IF_ERROR(cudaMallocHost(&ptr_, static_cast<size_t>(bytes)));
    } else {
      HEARTH_CUDA_RETURN_IF_ERROR(cudaMalloc(&ptr_, static_cast<size_t>(bytes)));
    }
    bytes_ = bytes;
    return absl::OkStatus();
  }
  void Reset() {
    if (ptr_ != nullptr) {
      // Nothing useful can be done with a failure while releasing.
      if (pinned_) {
        (void)cudaFreeHost(ptr_);
      } else {
        (void)cudaFree(ptr_);
      }
    }
    ptr_ = nullptr;
    bytes_ = 0;
  }

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  int64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
  bool pinned_ = false;
};

}  // namespace hearth::cuda_internal

#endif  // HEARTH_EXEC_CUDA_DEVICE_BUFFER_H_

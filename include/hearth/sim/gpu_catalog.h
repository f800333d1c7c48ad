// File: hearth/sim/gpu_catalog.h
//
// Datasheet figures of the accelerators the simulator models: memory
// bandwidth, dense BF16 tensor throughput and memory size. The roofline cost
// model (roofline_cost_model.h) turns them into step times. Every figure cites
// its source in gpu_catalog.cc. They are peak figures: real kernels reach a
// fraction, which RooflineOptions' efficiency factors express.
//
// Example:
//   absl::StatusOr<hearth::GpuSpec> gpu = hearth::FindGpu("RTX 4090");

#ifndef HEARTH_SIM_GPU_CATALOG_H_
#define HEARTH_SIM_GPU_CATALOG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hearth {

struct GpuSpec {
  std::string name;
  // Peak device memory bandwidth, bytes per second.
  double memory_bandwidth = 0;
  // Peak dense (no sparsity) BF16 tensor-core throughput, FLOP per second.
  double bf16_flops = 0;
  // Device memory, bytes.
  int64_t memory_bytes = 0;
};

// All catalogued GPUs, in a fixed order.
const std::vector<GpuSpec>& GpuCatalog();

// Case-insensitive lookup that also ignores spaces, '-' and '_' ("rtx4090",
// "H100-SXM"). NotFound lists the known names.
absl::StatusOr<GpuSpec> FindGpu(std::string_view name);

}  // namespace hearth

#endif  // HEARTH_SIM_GPU_CATALOG_H_

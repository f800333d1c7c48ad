// Calls into each installed component, so that a library, symbol or
// dependency missing from the package fails the link; runs what needs no GPU.
#include <cstdio>

#include "hearth/exec/cpu_reference_executor.h"
#include "hearth/exec/cuda_executor.h"
#include "hearth/jobs/jobs.h"
#include "hearth/sim/gpu_catalog.h"
#include "hearth/version.h"

int main() {
  if (hearth::Version() != HEARTH_VERSION_STRING) return 1;
  if (!hearth::CpuReferenceExecutor::Create({}).ok()) return 2;
  if (!hearth::FindGpu("H200").ok()) return 3;
  if (!hearth::JobPlanner::Create(hearth::HouseholdJobQueues(2)).ok()) return 4;
  // Unavailable on a machine without a GPU or in a build without CUDA.
  const absl::Status device = hearth::GetCudaDeviceInfo(0).status();
  std::printf("every header ok: hearth %s, CUDA compiled %d, device: %s\n",
              HEARTH_VERSION_STRING, hearth::CudaSupportCompiled() ? 1 : 0,
              device.ok() ? "yes" : device.ToString().c_str());
  return 0;
}

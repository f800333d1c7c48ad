#include "hearth/sim/gpu_catalog.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/catalog_lookup.h"
#include "sim/quote.h"

namespace hearth {
namespace {

constexpr double kGB = 1e9;      // vendors quote decimal GB/s
constexpr double kTera = 1e12;
constexpr int64_t kGiB = int64_t{1} << 30;

std::vector<GpuSpec> BuildCatalog() {
  return {
      // NVIDIA H200 datasheet / product page
      // (https://www.nvidia.com/en-us/data-center/h200/): H200 SXM 141 GB
      // HBM3e, 4.8 TB/s; BF16 tensor 1,979 TFLOPS with sparsity, so 989.5
      // dense.
      {"H200", 4800 * kGB, 989.5 * kTera, int64_t{141} * 1000 * 1000 * 1000},
      // NVIDIA H100 datasheet (https://www.nvidia.com/en-us/data-center/h100/):
      // H100 SXM 80 GB HBM3, 3.35 TB/s; BF16 tensor 1,979 TFLOPS with
      // sparsity, 989.5 dense.
      {"H100 SXM", 3350 * kGB, 989.5 * kTera, 80 * kGiB},
      // NVIDIA A100 datasheet
      // (https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf):
      // A100 80GB SXM 2,039 GB/s HBM2e; BF16 tensor 312 TFLOPS dense (624
      // with sparsity).
      {"A100-80GB", 2039 * kGB, 312 * kTera, 80 * kGiB},
      // NVIDIA L4 datasheet (https://www.nvidia.com/en-us/data-center/l4/):
      // 24 GB GDDR6, 300 GB/s; BF16 tensor 242 TFLOPS with sparsity, 121
      // dense.
      {"L4", 300 * kGB, 121 * kTera, 24 * kGiB},
      // NVIDIA Ada Lovelace architecture whitepaper (v2.01, Appendix A,
      // GeForce RTX 4090): 1,008 GB/s GDDR6X, 24 GB; peak BF16 tensor with
      // FP32 accumulate 165.2 TFLOPS dense (330.4 with sparsity).
      {"RTX 4090", 1008 * kGB, 165.2 * kTera, 24 * kGiB},
      // NVIDIA Ampere GA102 architecture whitepaper (Appendix A, GeForce RTX
      // 3090): 936 GB/s GDDR6X, 24 GB; peak BF16 tensor with FP32 accumulate
      // 71 TFLOPS dense (142 with sparsity).
      {"RTX 3090", 936 * kGB, 71 * kTera, 24 * kGiB},
      // NVIDIA A10 datasheet (https://www.nvidia.com/en-us/data-center/products/a10-gpu/):
      // 24 GB GDDR6, 600 GB/s; BF16 tensor 125 TFLOPS dense (250 with
      // sparsity). AWS's A10G (g5 instances, the VTC paper's GPU) is the A10
      // part; its figures are not published separately.
      {"A10G", 600 * kGB, 125 * kTera, 24 * kGiB},
  };
}

}  // namespace

const std::vector<GpuSpec>& GpuCatalog() {
  static const std::vector<GpuSpec>* const kCatalog =
      new std::vector<GpuSpec>(BuildCatalog());
  return *kCatalog;
}

absl::StatusOr<GpuSpec> FindGpu(std::string_view name) {
  const std::vector<GpuSpec>& all = GpuCatalog();
  for (const GpuSpec& g : all) {
    if (internal::CatalogKey(g.name) == internal::CatalogKey(name)) return g;
  }
  std::vector<std::string> names;
  for (const GpuSpec& g : all) names.push_back(g.name);
  return absl::NotFoundError(absl::StrCat("unknown GPU ", internal::Quote(name),
                                          "; known: ",
                                          absl::StrJoin(names, ", ")));
}

}  // namespace hearth

// Decode paged-attention bandwidth on the CUDA executor's kernels: bytes of
// K/V read per second over batch {1, 16, 64, 256} x context {512, 4k, 32k}
// for the Llama-3.1-8B shape (bf16, 8 KV heads of 128, blocks of 16), as a
// fraction of the device's measured copy bandwidth. Target (issue 5): >= 80%
// at batch >= 16 and context >= 4k.
//
//   hearth_gpu_decode_attention [--out=decode_attention.csv] [--iterations=20]

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "gpu_bench_util.h"
#include "hearth/exec/cuda_executor.h"

ABSL_FLAG(std::string, out, "", "CSV file for the table (none when empty).");
ABSL_FLAG(int, iterations, 20, "Timed repetitions per cell.");

int main(int argc, char** argv) {
  using namespace hearth;
  if (!gpu_bench::ParseFlags(argc, argv)) return 1;
  const std::string out = absl::GetFlag(FLAGS_out);
  const int iterations = absl::GetFlag(FLAGS_iterations);
  absl::StatusOr<CudaDeviceInfo> info = GetCudaDeviceInfo(0);
  if (!info.ok()) {
    std::printf("SKIPPED: %s\n", info.status().ToString().c_str());
    return gpu_bench::kExitNoGpu;
  }
  absl::StatusOr<double> copy = MeasureDeviceCopyBandwidth(int64_t{1} << 30, 20);
  if (!copy.ok()) {
    std::fprintf(stderr, "copy bandwidth: %s\n", copy.status().ToString().c_str());
    return 1;
  }
  std::printf("device: %s, %d SMs; copy bandwidth (read+write) %.0f GB/s\n",
              info->name.c_str(), info->multiprocessors, *copy / 1e9);
  const TransformerConfig model = Llama31_8BShape();
  std::string csv = "batch,context,seconds,kv_bytes,bytes_per_second,fraction_of_copy\n";
  int misses = 0;
  std::printf("%6s %8s %12s %12s %10s\n", "batch", "context", "time_us", "GB/s", "of copy");
  for (int batch : {1, 16, 64, 256}) {
    for (int context : {512, 4096, 32768}) {
      absl::StatusOr<DecodeAttentionTiming> t =
          TimeDecodeAttention(model, 16, batch, context, iterations);
      if (!t.ok()) {
        std::fprintf(stderr, "batch %d context %d: %s\n", batch, context,
                     t.status().ToString().c_str());
        return 1;
      }
      const double frac = t->bytes_per_second() / *copy;
      std::printf("%6d %8d %12.1f %12.0f %9.1f%%\n", batch, context,
                  t->seconds * 1e6, t->bytes_per_second() / 1e9, 100 * frac);
      csv += absl::StrFormat("%d,%d,%.9g,%.0f,%.6g,%.4f\n", batch, context,
                             t->seconds, t->bytes, t->bytes_per_second(), frac);
      if (batch >= 16 && context >= 4096 && frac < 0.8) ++misses;
    }
  }
  std::printf("target >= 80%% of copy bandwidth at batch >= 16, context >= 4k: %s\n",
              misses == 0 ? "MET" : absl::StrFormat("MISSED in %d of 6 cells", misses).c_str());
  csv = absl::StrFormat("# device %s, copy bandwidth %.6g B/s\n", info->name, *copy) + csv;
  return gpu_bench::WriteFile(out, csv) ? 0 : 1;
}

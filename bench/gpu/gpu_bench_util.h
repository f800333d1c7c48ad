// File: bench/gpu/gpu_bench_util.h
//
// Small helpers shared by the GPU measurement programs: parsing their absl
// flags and writing result files. Exit status 2 means "no GPU here" so scripts can tell
// a skip from a failure.

#ifndef HEARTH_BENCH_GPU_GPU_BENCH_UTIL_H_
#define HEARTH_BENCH_GPU_GPU_BENCH_UTIL_H_

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/parse.h"

namespace hearth::gpu_bench {

constexpr int kExitNoGpu = 2;

// absl::ParseCommandLine, then false (with a message) when an argument that
// is not a flag is left over.
inline bool ParseFlags(int argc, char** argv) {
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() <= 1) return true;
  std::fprintf(stderr, "unexpected argument '%s' (flags are --key=value)\n", rest[1]);
  return false;
}

inline bool WriteFile(const std::string& path, const std::string& text) {
  if (path.empty()) return true;
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "could not write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace hearth::gpu_bench

#endif  // HEARTH_BENCH_GPU_GPU_BENCH_UTIL_H_

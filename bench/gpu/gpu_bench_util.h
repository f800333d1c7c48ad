// File: bench/gpu/gpu_bench_util.h
//
// Small helpers shared by the GPU measurement programs: --key=value flags and
// writing result files. Exit status 2 means "no GPU here" so scripts can tell
// a skip from a failure.

#ifndef HEARTH_BENCH_GPU_GPU_BENCH_UTIL_H_
#define HEARTH_BENCH_GPU_GPU_BENCH_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace hearth::gpu_bench {

constexpr int kExitNoGpu = 2;

// Parses --key=value and --flag (value "1"); anything else is an error.
inline bool ParseFlags(int argc, char** argv, std::map<std::string, std::string>* out) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      std::fprintf(stderr, "unexpected argument '%s' (flags are --key=value)\n", argv[i]);
      return false;
    }
    const size_t eq = a.find('=');
    if (eq == std::string::npos) {
      (*out)[a.substr(2)] = "1";
    } else {
      (*out)[a.substr(2, eq - 2)] = a.substr(eq + 1);
    }
  }
  return true;
}

inline std::string Flag(const std::map<std::string, std::string>& f,
                        const std::string& key, const std::string& def) {
  auto it = f.find(key);
  return it == f.end() ? def : it->second;
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

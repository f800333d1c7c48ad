// File: bench/common/process_memory.h
//
// The process's resident memory as the kernel reports it, for soak and burst
// programs that watch memory over millions of requests. Linux only; 0 where
// /proc/self/status cannot be read (the figure is then missing, not wrong).

#ifndef HEARTH_BENCH_COMMON_PROCESS_MEMORY_H_
#define HEARTH_BENCH_COMMON_PROCESS_MEMORY_H_

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace hearth::bench {

// The value in KiB of one "Name:   1234 kB" line of /proc/self/status.
inline int64_t ProcStatusKib(const char* name) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  int64_t kib = 0;
  const size_t n = std::strlen(name);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, name, n) == 0 && line[n] == ':') {
      long long v = 0;
      if (std::sscanf(line + n + 1, "%lld", &v) == 1) kib = v;
      break;
    }
  }
  std::fclose(f);
  return kib;
}

// Resident set size now.
inline int64_t CurrentRssKib() { return ProcStatusKib("VmRSS"); }

// Highest resident set size since the process started.
inline int64_t PeakRssKib() { return ProcStatusKib("VmHWM"); }

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_COMMON_PROCESS_MEMORY_H_

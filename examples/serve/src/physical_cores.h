// File: examples/serve/src/physical_cores.h
//
// How many physical cores this process may run on: --threads' default.
// llama.cpp's matrix work gains nothing from a core's second hardware
// thread (the two share the core's vector units) and loses to it when the
// threads wait for each other, so one thread per physical core is the
// fastest count; more threads than allowed cores only queue.
//
// Counted, first that answers:
//   1. sysfs: for each CPU in the process's affinity mask, the CPUs that
//      share its core (topology/core_cpus_list, or thread_siblings_list on
//      kernels before 5.7); distinct sets are distinct cores;
//   2. /proc/cpuinfo: distinct (physical id, core id) pairs of the allowed
//      processors (x86 lists them; many ARM kernels do not);
//   3. half the allowed CPUs (or of std::thread::hardware_concurrency()),
//      at least 1: a guess that 2-way SMT is on.
// A cgroup CPU quota (a container's --cpus) is not read: it limits time,
// not cores, and --threads sets the count by hand.
//
// Thread-safety: plain functions; they read files only.
//
// Example:
//   copts.n_threads = flag > 0 ? flag : PhysicalCores();

#ifndef HEARTH_SERVE_PHYSICAL_CORES_H_
#define HEARTH_SERVE_PHYSICAL_CORES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace hearth::serve {

// This machine's, for this process: at least 1.
int PhysicalCores();

// The same from the files under `sys_cpu_dir` (/sys/devices/system/cpu) and
// `cpuinfo_path` (/proc/cpuinfo), for the CPUs `allowed` (empty: the CPUs
// sys_cpu_dir/online lists, else every processor in cpuinfo).
int PhysicalCoresFrom(const std::string& sys_cpu_dir, const std::string& cpuinfo_path,
                      const std::vector<int>& allowed);

// A kernel CPU list ("0-3,8,10-11"); nullopt when malformed or absurdly
// large (above 2^16 CPUs).
std::optional<std::vector<int>> ParseCpuList(absl::string_view list);

// Distinct (physical id, core id) pairs among the processors of `cpuinfo`
// in `allowed` (empty: all); nullopt when a processor lacks either field.
std::optional<int> CoresInCpuinfo(absl::string_view cpuinfo, const std::vector<int>& allowed);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_PHYSICAL_CORES_H_

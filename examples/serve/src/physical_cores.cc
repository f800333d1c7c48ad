#include "physical_cores.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace hearth::serve {
namespace {

constexpr int kMaxCpus = 1 << 16;
// Kernel CPU lists and cpuinfo are small; a file past this is no such file.
constexpr std::streamsize kMaxFileBytes = 16 << 20;

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string out(static_cast<size_t>(kMaxFileBytes) + 1, '\0');
  in.read(out.data(), kMaxFileBytes + 1);
  if (in.gcount() > kMaxFileBytes) return std::nullopt;
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

std::vector<int> AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  std::vector<int> out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  }
  return out;
}

bool Allowed(const std::vector<int>& allowed, int cpu) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), cpu) != allowed.end();
}

std::optional<int> CoresInSysfs(const std::string& dir, const std::vector<int>& cpus) {
  std::set<std::vector<int>> cores;
  for (int cpu : cpus) {
    const std::string topology = absl::StrCat(dir, "/cpu", cpu, "/topology/");
    std::optional<std::string> list = ReadFile(topology + "core_cpus_list");
    if (!list) list = ReadFile(topology + "thread_siblings_list");
    if (!list) return std::nullopt;
    std::optional<std::vector<int>> siblings = ParseCpuList(*list);
    if (!siblings || std::find(siblings->begin(), siblings->end(), cpu) == siblings->end()) {
      return std::nullopt;
    }
    cores.insert(*std::move(siblings));
  }
  if (cores.empty()) return std::nullopt;
  return static_cast<int>(cores.size());
}

}  // namespace

std::optional<std::vector<int>> ParseCpuList(absl::string_view list) {
  list = absl::StripAsciiWhitespace(list);
  if (list.empty()) return std::nullopt;
  std::vector<int> out;
  for (absl::string_view range : absl::StrSplit(list, ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(range, '-');
    int lo = 0;
    int hi = 0;
    if (ends.size() > 2 || !absl::SimpleAtoi(ends.front(), &lo) ||
        !absl::SimpleAtoi(ends.back(), &hi)) {
      return std::nullopt;
    }
    if (lo < 0 || hi < lo || hi >= kMaxCpus || out.size() + (hi - lo) >= kMaxCpus) {
      return std::nullopt;
    }
    for (int c = lo; c <= hi; ++c) out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<int> CoresInCpuinfo(absl::string_view cpuinfo, const std::vector<int>& allowed) {
  std::set<std::pair<int, int>> cores;
  // One block per processor, separated by blank lines.
  for (absl::string_view block : absl::StrSplit(cpuinfo, "\n\n", absl::SkipWhitespace())) {
    std::optional<int> processor, package, core;
    for (absl::string_view line : absl::StrSplit(block, '\n')) {
      std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, ':');
      const absl::string_view key = absl::StripAsciiWhitespace(kv.first);
      int value = 0;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(kv.second), &value)) continue;
      if (key == "processor") processor = value;
      if (key == "physical id") package = value;
      if (key == "core id") core = value;
    }
    if (!processor) continue;  // not a processor's block (ARM's trailer, ...)
    if (!package || !core) return std::nullopt;
    if (Allowed(allowed, *processor)) cores.emplace(*package, *core);
  }
  if (cores.empty()) return std::nullopt;
  return static_cast<int>(cores.size());
}

int PhysicalCoresFrom(const std::string& sys_cpu_dir, const std::string& cpuinfo_path,
                      const std::vector<int>& allowed) {
  std::vector<int> cpus = allowed;
  if (cpus.empty()) {
    if (std::optional<std::string> online = ReadFile(sys_cpu_dir + "/online")) {
      cpus = ParseCpuList(*online).value_or(std::vector<int>{});
    }
  }
  if (!cpus.empty()) {
    if (std::optional<int> n = CoresInSysfs(sys_cpu_dir, cpus)) return *n;
  }
  if (std::optional<std::string> cpuinfo = ReadFile(cpuinfo_path)) {
    if (std::optional<int> n = CoresInCpuinfo(*cpuinfo, allowed)) return *n;
  }
  const int logical = !cpus.empty() ? static_cast<int>(cpus.size())
                                    : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, logical / 2);
}

int PhysicalCores() {
  return PhysicalCoresFrom("/sys/devices/system/cpu", "/proc/cpuinfo", AffinityCpus());
}

}  // namespace hearth::serve

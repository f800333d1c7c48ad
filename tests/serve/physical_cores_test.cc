// Unit tests of --threads' default (physical_cores.h): kernel CPU lists,
// sysfs core sets and /proc/cpuinfo pairs counted for the allowed CPUs
// only, and each fallback when a source is missing or malformed.

#ifdef HEARTH_SERVE_FOUND

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "physical_cores.h"

namespace hearth::serve {
namespace {

namespace fs = std::filesystem;

// A fake /sys/devices/system/cpu: `siblings[i]` is cpu i's core_cpus_list
// (empty: no topology file), `online` the online list.
class FakeSys {
 public:
  FakeSys(const std::string& online, const std::vector<std::string>& siblings,
          const char* file = "core_cpus_list")
      : dir_(fs::temp_directory_path() /
             absl::StrCat("hearth_cores_", getpid(), "_", counter_++)) {
    fs::create_directories(dir_);
    Write(dir_ / "online", online);
    for (size_t i = 0; i < siblings.size(); ++i) {
      if (siblings[i].empty()) continue;
      fs::path topology = dir_ / absl::StrCat("cpu", i) / "topology";
      fs::create_directories(topology);
      Write(topology / file, siblings[i] + "\n");
    }
  }
  ~FakeSys() { fs::remove_all(dir_); }
  std::string dir() const { return dir_.string(); }
  std::string file(const std::string& name, const std::string& text) const {
    Write(dir_ / name, text);
    return (dir_ / name).string();
  }

 private:
  static void Write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  static inline int counter_ = 0;
  fs::path dir_;
};

// Four processors: two cores of two threads each, one package.
constexpr char kSmtCpuinfo[] =
    "processor\t: 0\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu sse\n\n"
    "processor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\n\n"
    "processor\t: 2\nphysical id\t: 0\ncore id\t\t: 0\n\n"
    "processor\t: 3\nphysical id\t: 0\ncore id\t\t: 1\n\n";

TEST_CASE("physical cores: kernel CPU lists", "[serve]") {
  CHECK(ParseCpuList("0-3,8,10-11\n") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  CHECK(ParseCpuList("5") == std::vector<int>{5});
  CHECK(ParseCpuList("3,1,1-2") == std::vector<int>{1, 2, 3});
  for (const char* bad : {"", "a", "1-", "-1", "3-1", "1-2-3", "1,,2", "0-99999999", "1.5"}) {
    INFO(bad);
    CHECK(!ParseCpuList(bad));
  }
}

TEST_CASE("physical cores: /proc/cpuinfo pairs", "[serve]") {
  CHECK(CoresInCpuinfo(kSmtCpuinfo, {}) == 2);
  CHECK(CoresInCpuinfo(kSmtCpuinfo, {0, 2}) == 1);
  CHECK(CoresInCpuinfo(kSmtCpuinfo, {1, 2}) == 2);
  // Two packages with the same core ids are four cores.
  CHECK(CoresInCpuinfo("processor: 0\nphysical id: 0\ncore id: 0\n\n"
                       "processor: 1\nphysical id: 1\ncore id: 0\n",
                       {}) == 2);
  // ARM: no core id; and no processor at all.
  CHECK(!CoresInCpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n\nprocessor\t: 1\n\nHardware\t: x\n",
                        {}));
  CHECK(!CoresInCpuinfo("", {}));
  CHECK(!CoresInCpuinfo(kSmtCpuinfo, {7}));
}

TEST_CASE("physical cores: sysfs core sets for the allowed CPUs", "[serve]") {
  FakeSys smt("0-7", {"0,4", "1,5", "2,6", "3,7", "0,4", "1,5", "2,6", "3,7"});
  CHECK(PhysicalCoresFrom(smt.dir(), "/nonexistent", {}) == 4);
  CHECK(PhysicalCoresFrom(smt.dir(), "/nonexistent", {0, 4}) == 1);
  CHECK(PhysicalCoresFrom(smt.dir(), "/nonexistent", {0, 1, 5}) == 2);
  FakeSys old_kernel("0-3", {"0-1", "0-1", "2-3", "2-3"}, "thread_siblings_list");
  CHECK(PhysicalCoresFrom(old_kernel.dir(), "/nonexistent", {}) == 2);
  FakeSys no_smt("0-2", {"0", "1", "2"});
  CHECK(PhysicalCoresFrom(no_smt.dir(), "/nonexistent", {}) == 3);
}

TEST_CASE("physical cores: each fallback", "[serve]") {
  // cpu2 has no topology: cpuinfo answers.
  FakeSys partial("0-3", {"0,2", "1,3", "", "1,3"});
  const std::string cpuinfo = partial.file("cpuinfo", kSmtCpuinfo);
  CHECK(PhysicalCoresFrom(partial.dir(), cpuinfo, {}) == 2);
  // A siblings list that does not hold its own CPU is not believed.
  FakeSys lying("0-1", {"5", "5"});
  CHECK(PhysicalCoresFrom(lying.dir(), "/nonexistent", {}) == 1);
  // Nothing readable: half the allowed CPUs, at least one.
  CHECK(PhysicalCoresFrom("/nonexistent", "/nonexistent", {0, 1, 2, 3, 4, 5}) == 3);
  CHECK(PhysicalCoresFrom("/nonexistent", "/nonexistent", {0}) == 1);
  CHECK(PhysicalCoresFrom("/nonexistent", "/nonexistent", {}) ==
        std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2));
  // ARM cpuinfo without core ids falls through to the guess.
  const std::string arm = partial.file("arm", "processor\t: 0\n\nprocessor\t: 1\n");
  CHECK(PhysicalCoresFrom("/nonexistent", arm, {0, 1}) == 1);
}

TEST_CASE("physical cores: this machine has at least one, at most its CPUs", "[serve]") {
  const int n = PhysicalCores();
  CHECK(n >= 1);
  CHECK(n <= std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND

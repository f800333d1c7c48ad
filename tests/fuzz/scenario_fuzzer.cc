// scenario_fuzzer: the input is a scenario's TOML text. ParseScenario must
// answer with a Scenario or a Status. A household scenario it accepts is then
// built into a workload and simulated briefly, with its sizes clamped first
// (request_cap, duration, KV blocks, the number of requests and their
// lengths), so one execution stays in milliseconds: the fuzzer looks for
// crashes, UB and unbounded loops, not for long runs.
//
// Trace-backed kinds (azure, servegen, agent) stop after parsing: building
// them reads files named by the input, and their readers have fuzzers of
// their own (azure_trace_fuzzer, servegen_trace_fuzzer, agent_trace_fuzzer).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <unistd.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/simulator.h"
#include "tests/fuzz/fuzz_check.h"

namespace hearth::fuzz {
namespace {

// Relative paths in the input resolve under an empty folder of our own, so
// that an agent scenario naming "." parses (its folder lists no sessions).
std::string& BaseDir() {
  static std::string dir;
  return dir;
}
constexpr int64_t kMaxRequests = 256;
constexpr size_t kMaxSimulatedRequests = 12;
constexpr int32_t kMaxBlocks = 1 << 14;

void ClampForSpeed(Scenario& s) {
  WorkloadSpec& w = s.workload;
  w.request_cap = std::min<int64_t>(w.request_cap, kMaxRequests);
  w.load = 0;  // a positive load runs capacity-measuring simulations first
  w.household.duration = std::min(w.household.duration, absl::Hours(1));
  for (FloodSpec& f : w.floods) f.count = std::min<int32_t>(f.count, kMaxRequests);
  // The core allocates per configured block (up to 2^24 by its contract).
  KvCacheConfig& kv = s.scheduler.kv;
  kv.num_device_blocks = std::min(kv.num_device_blocks, kMaxBlocks);
  kv.num_host_blocks = std::min(kv.num_host_blocks, kMaxBlocks);
  kv.watermark_blocks = std::min(kv.watermark_blocks, kv.num_device_blocks - 1);
  for (WorkClassConfig& c : s.scheduler.work_classes) {
    c.kv_block_budget = std::min(c.kv_block_budget, kv.num_device_blocks);
  }
  s.default_max_new_tokens = std::min(s.default_max_new_tokens, 16);
}

void ShrinkWorkload(Workload& w) {
  if (w.requests.size() > kMaxSimulatedRequests) w.requests.resize(kMaxSimulatedRequests);
  for (SimRequest& r : w.requests) {
    r.prompt_tokens = std::min(r.prompt_tokens, 512);
    r.output_tokens = std::min(r.output_tokens, 16);
    r.max_new_tokens = std::min(r.max_new_tokens, 16);
    // A shared prefix fits this prompt and its parent's whole sequence;
    // parents come earlier, so theirs are already shrunk.
    if (r.parent < 0 || r.parent >= static_cast<int32_t>(w.requests.size())) {
      r.parent = -1;
      r.shared_prefix_tokens = 0;
      continue;
    }
    const SimRequest& p = w.requests[r.parent];
    r.shared_prefix_tokens =
        std::min({r.shared_prefix_tokens, r.prompt_tokens, p.prompt_tokens + p.output_tokens});
  }
}

void SimulateBriefly(Scenario& s) {
  ClampForSpeed(s);
  absl::StatusOr<Workload> w = BuildWorkload(s);
  Note("BuildWorkload", w.status());
  if (!w.ok()) {
    Require(!w.status().message().empty(), "BuildWorkload failed without a message");
    return;
  }
  Require(static_cast<int64_t>(w->requests.size()) <= s.workload.request_cap,
          absl::StrCat("BuildWorkload made ", w->requests.size(),
                       " requests, over request_cap ", s.workload.request_cap));
  ShrinkWorkload(*w);
  absl::StatusOr<SimulationOptions> o = SimulationOptionsFor(s, s.policies.front());
  Note("SimulationOptionsFor", o.status());
  if (!o.ok()) return;
  o->record_timeline = false;
  Note("RunSimulation", RunSimulation(*w, *o).status());
}

}  // namespace
}  // namespace hearth::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char dir[] = "/tmp/hearth-scenario-fuzz-XXXXXX";
  if (mkdtemp(dir) == nullptr) hearth::fuzz::Fail("mkdtemp failed");
  hearth::fuzz::BaseDir() = dir;
  std::atexit([] { rmdir(hearth::fuzz::BaseDir().c_str()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hearth;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Scenario> s = ParseScenario(text, "fuzz.toml", fuzz::BaseDir());
  fuzz::Note("ParseScenario", s.status());
  if (!s.ok()) {
    fuzz::Require(!s.status().message().empty(), "ParseScenario failed without a message");
    return 0;
  }
  fuzz::Require(!s->policies.empty(), "a parsed scenario has no policy");
  if (s->workload.kind == WorkloadSpec::Kind::kHousehold) fuzz::SimulateBriefly(*s);
  return 0;
}

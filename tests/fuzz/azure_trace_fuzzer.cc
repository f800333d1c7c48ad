// azure_trace_fuzzer: the input is an Azure trace CSV's content
// (azure_trace.h) after a control line (control_line.h) that picks the
// mapping (users, class rules, window, speed), so that every branch of the
// row mapping is reached. ParseAzureTrace must answer with a workload or a
// Status, and a workload must respect the mapping's limits.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "hearth/sim/azure_trace.h"
#include "hearth/sim/trace_mapping.h"
#include "tests/fuzz/control_line.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/hostile_values.h"

namespace hearth::fuzz {
namespace {

// The default mapping unless the control line asks for another.
TraceMapping AnyMapping(FuzzedDataProvider& in) {
  TraceMapping m;
  if (!in.ConsumeBool()) return m;
  m.users.resize(in.ConsumeIntegralInRange(0, 4));
  for (uint32_t& u : m.users) u = in.ConsumeIntegralInRange<uint32_t>(0, 7);
  if (in.ConsumeBool()) {
    m.user_shares.resize(in.ConsumeIntegralInRange<size_t>(0, 4));
    for (double& s : m.user_shares) s = SmallOrEdgeDouble(in, 0, 10);
  }
  m.assignment = in.ConsumeBool() ? UserAssignment::kRandom : UserAssignment::kRoundRobin;
  m.class_rules.resize(in.ConsumeIntegralInRange(0, 3));
  for (ClassRule& r : m.class_rules) {
    r.max_prompt_tokens = SmallOrEdge<int32_t>(in, 1, 4096);
    r.max_output_tokens = SmallOrEdge<int32_t>(in, 1, 4096);
    r.work_class = in.ConsumeIntegralInRange<uint32_t>(0, 4);
  }
  m.default_class = in.ConsumeIntegralInRange<uint32_t>(0, 4);
  m.time_scale = SmallOrEdgeDouble(in, 1e-3, 1e3);
  m.skip = SmallOrEdgeDuration(in, 100'000);
  m.duration = in.ConsumeBool() ? absl::InfiniteDuration() : SmallOrEdgeDuration(in, 1'000'000);
  m.max_requests = SmallOrEdge<int64_t>(in, 0, 1000);
  m.seed = in.ConsumeIntegral<uint64_t>();
  return m;
}

}  // namespace
}  // namespace hearth::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hearth;
  const fuzz::ControlledInput input = fuzz::SplitControlLine(data, size);
  FuzzedDataProvider in(reinterpret_cast<const uint8_t*>(input.control.data()),
                        input.control.size());
  const TraceMapping mapping = fuzz::AnyMapping(in);
  absl::StatusOr<Workload> w = ParseAzureTrace(input.text, "fuzz.csv", mapping);
  fuzz::Note("ParseAzureTrace", w.status());
  if (!w.ok()) {
    fuzz::Require(!w.status().message().empty(), "ParseAzureTrace failed without a message");
    return 0;
  }
  if (mapping.max_requests > 0) {
    fuzz::Require(static_cast<int64_t>(w->requests.size()) <= mapping.max_requests,
                  "more rows than max_requests");
  }
  for (const SimRequest& r : w->requests) {
    fuzz::Require(r.arrival >= absl::ZeroDuration() && r.arrival < absl::InfiniteDuration(),
                  absl::StrCat("a row arrives at ", absl::FormatDuration(r.arrival)));
    fuzz::Require(r.prompt_tokens >= 1 && r.output_tokens >= 1, "a row with no tokens");
  }
  return 0;
}

// agent_trace_fuzzer: the input is one or more LMCache agent session files
// (agent_trace.h), separated by blank lines, after a control line
// (control_line.h) that picks the options (bytes per token, think scaling,
// spacing, cuts). ParseAgentTraces must answer with a workload or a Status,
// and a workload must be a well-formed chain of calls: parents earlier,
// lengths >= 1, shared prefixes within both prompts, think times within
// [0, max_think].

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "hearth/sim/agent_trace.h"
#include "tests/fuzz/control_line.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/hostile_values.h"

namespace hearth::fuzz {
namespace {

AgentTraceOptions AnyOptions(FuzzedDataProvider& in) {
  AgentTraceOptions o;
  if (!in.ConsumeBool()) return o;
  o.users.resize(in.ConsumeIntegralInRange(0, 3));
  for (uint32_t& u : o.users) u = in.ConsumeIntegralInRange<uint32_t>(0, 7);
  o.work_class = in.ConsumeIntegralInRange<uint32_t>(0, 4);
  o.bytes_per_token = SmallOrEdgeDouble(in, 0.1, 100);
  o.think_scale = SmallOrEdgeDouble(in, 0, 100);
  o.max_think = SmallOrEdgeDuration(in, 600'000);
  o.session_spacing = SmallOrEdgeDuration(in, 600'000);
  o.max_prompt_tokens = SmallOrEdge<int32_t>(in, 0, 1 << 16);
  o.max_sessions = SmallOrEdge<int64_t>(in, 0, 4);
  return o;
}

void CheckChain(const Workload& w, const AgentTraceOptions& o) {
  for (size_t i = 0; i < w.requests.size(); ++i) {
    const SimRequest& r = w.requests[i];
    Require(r.prompt_tokens >= 1 && r.output_tokens >= 1, "a call with no tokens");
    if (o.max_prompt_tokens > 0) {
      Require(r.prompt_tokens <= o.max_prompt_tokens, "a prompt over max_prompt_tokens");
    }
    if (r.parent < 0) continue;
    Require(static_cast<size_t>(r.parent) < i, "a parent after its call");
    const SimRequest& p = w.requests[r.parent];
    Require(r.shared_prefix_tokens >= 0 && r.shared_prefix_tokens <= r.prompt_tokens &&
                r.shared_prefix_tokens <= p.prompt_tokens,
            "a shared prefix longer than a prompt");
    Require(r.think_time >= absl::ZeroDuration() && r.think_time <= o.max_think,
            absl::StrCat("a think time of ", absl::FormatDuration(r.think_time)));
  }
}

}  // namespace
}  // namespace hearth::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hearth;
  const fuzz::ControlledInput input = fuzz::SplitControlLine(data, size);
  FuzzedDataProvider in(reinterpret_cast<const uint8_t*>(input.control.data()),
                        input.control.size());
  const AgentTraceOptions options = fuzz::AnyOptions(in);
  std::vector<AgentSessionText> sessions;
  std::string_view rest = input.text;
  for (bool last = false; !last;) {
    const size_t gap = rest.find("\n\n");
    last = gap == std::string_view::npos;
    sessions.push_back({absl::StrCat("session", sessions.size(), ".jsonl"), rest.substr(0, gap)});
    if (!last) rest.remove_prefix(gap + 2);
  }
  absl::StatusOr<Workload> w = ParseAgentTraces(sessions, options);
  fuzz::Note("ParseAgentTraces", w.status());
  if (!w.ok()) {
    fuzz::Require(!w.status().message().empty(), "ParseAgentTraces failed without a message");
    return 0;
  }
  fuzz::CheckChain(*w, options);
  return 0;
}

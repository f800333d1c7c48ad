// trace_readers_fuzzer: one target for the readers of the formats people
// bring (one target, not five, keeps the CI fuzz stage's time in check).
// The input's first byte picks the reader, the rest of the first line is
// the control line (control_line.h) that picks its options, and the rest is
// the file:
//   '0' Mooncake JSONL         '1' ServeGen dataset.json
//   '2' ShareGPT-style lengths '3' BurstGPT CSV
//   '4' Hearth's request JSONL (any other byte: the reader of byte % 5)
// Every reader must answer with a workload or a Status with a message; a
// workload must be well formed (ValidateWorkload), respect max_requests, and
// arrive at finite offsets >= 0.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "hearth/sim/burstgpt_trace.h"
#include "hearth/sim/mooncake_trace.h"
#include "hearth/sim/request_jsonl.h"
#include "hearth/sim/servegen_dataset.h"
#include "hearth/sim/sharegpt_lengths.h"
#include "hearth/sim/trace_mapping.h"
#include "tests/fuzz/control_line.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/hostile_values.h"

namespace hearth::fuzz {
namespace {

constexpr uint32_t kUsers = 8;
constexpr uint32_t kClasses = 5;

TraceMapping AnyMapping(FuzzedDataProvider& in) {
  TraceMapping m;
  if (!in.ConsumeBool()) return m;
  m.users.resize(in.ConsumeIntegralInRange(1, 4));
  for (uint32_t& u : m.users) u = in.ConsumeIntegralInRange<uint32_t>(0, kUsers - 1);
  m.assignment = in.ConsumeBool() ? UserAssignment::kRandom : UserAssignment::kRoundRobin;
  m.class_rules.resize(in.ConsumeIntegralInRange(0, 2));
  for (ClassRule& r : m.class_rules) {
    r.max_prompt_tokens = SmallOrEdge<int32_t>(in, 1, 4096);
    r.work_class = in.ConsumeIntegralInRange<uint32_t>(0, kClasses - 1);
  }
  m.default_class = in.ConsumeIntegralInRange<uint32_t>(0, kClasses - 1);
  m.time_scale = SmallOrEdgeDouble(in, 1e-3, 1e3);
  m.skip = SmallOrEdgeDuration(in, 100'000);
  m.duration = in.ConsumeBool() ? absl::InfiniteDuration() : SmallOrEdgeDuration(in, 1'000'000);
  m.max_requests = SmallOrEdge<int64_t>(in, 0, 1000);
  m.seed = in.ConsumeIntegral<uint64_t>();
  return m;
}

void CheckWorkload(const absl::StatusOr<Workload>& w, const char* reader, int64_t max_requests) {
  Note(reader, w.status());
  if (!w.ok()) {
    Require(!w.status().message().empty(), absl::StrCat(reader, " failed without a message"));
    return;
  }
  if (max_requests > 0) {
    Require(static_cast<int64_t>(w->requests.size()) <= max_requests, "more rows than max_requests");
  }
  absl::Status valid = ValidateWorkload(*w, kUsers, kClasses);
  Require(valid.ok(), absl::StrCat(reader, " built a bad workload: ", valid.message()));
  for (const SimRequest& r : w->requests) {
    if (r.parent >= 0) continue;
    Require(r.arrival >= absl::ZeroDuration() && r.arrival < absl::InfiniteDuration(),
            absl::StrCat("a row arrives at ", absl::FormatDuration(r.arrival)));
  }
}

void FuzzServeGenDataset(std::string_view text) {
  auto windows = ParseServeGenDataset(text, "fuzz.json");
  Note("ParseServeGenDataset", windows.status());
  if (!windows.ok()) {
    Require(!windows.status().message().empty(), "ParseServeGenDataset failed without a message");
    return;
  }
  for (size_t i = 0; i < windows->size(); ++i) {
    const ServeGenLengthWindow& w = (*windows)[i];
    Require(i == 0 || (*windows)[i - 1].start_s <= w.start_s, "windows out of order");
    for (const DiscreteLengths* d : {&w.input, &w.output}) {
      Require(!d->tokens.empty() && d->tokens.size() == d->cumulative.size() &&
                  d->cumulative.back() > 0,
              "a window without a usable distribution");
      for (double u : {0.0, 0.5, 0.999999}) {
        const int32_t v = d->At(u);
        Require(v >= 1, "a length below one token");
      }
    }
  }
  if (!windows->empty()) (void)ServeGenWindowAt(*windows, (*windows)[0].start_s + 1);
}

RequestJsonlOptions JsonlOptions(FuzzedDataProvider& in) {
  RequestJsonlOptions o;
  o.user_names = {"alice", "bob", "", "dan"};
  o.class_names = {"chat", "agent"};
  o.default_user = in.ConsumeIntegralInRange<uint32_t>(0, 3);
  o.default_class = in.ConsumeIntegralInRange<uint32_t>(0, 1);
  o.hash_block_tokens = SmallOrEdge<int32_t>(in, 1, 64);
  o.max_requests = SmallOrEdge<int64_t>(in, 0, 100);
  return o;
}

}  // namespace
}  // namespace hearth::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hearth;
  if (size == 0) return 0;
  const int reader = data[0] % 5;
  const fuzz::ControlledInput input = fuzz::SplitControlLine(data + 1, size - 1);
  FuzzedDataProvider in(reinterpret_cast<const uint8_t*>(input.control.data()),
                        input.control.size());
  switch (reader) {
    case 0: {
      const TraceMapping m = fuzz::AnyMapping(in);
      const int32_t block = fuzz::SmallOrEdge<int32_t>(in, 1, 1024);
      fuzz::CheckWorkload(ParseMooncakeTrace(input.text, "fuzz.jsonl", m, block),
                          "ParseMooncakeTrace", m.max_requests);
      break;
    }
    case 1:
      fuzz::FuzzServeGenDataset(input.text);
      break;
    case 2: {
      const TraceMapping m = fuzz::AnyMapping(in);
      ShareGptOptions o;
      o.rate_per_s = fuzz::SmallOrEdgeDouble(in, 1e-6, 1e6);
      o.bytes_per_token = fuzz::SmallOrEdgeDouble(in, 0.1, 100);
      fuzz::CheckWorkload(ParseShareGptLengths(input.text, "fuzz.json", m, o),
                          "ParseShareGptLengths", m.max_requests);
      break;
    }
    case 3: {
      const TraceMapping m = fuzz::AnyMapping(in);
      BurstGptOptions o;
      if (in.ConsumeBool()) o.models = {"ChatGPT"};
      o.failed = in.ConsumeBool() ? FailedResponses::kSkip : FailedResponses::kReplayPrefill;
      fuzz::CheckWorkload(ParseBurstGptTrace(input.text, "fuzz.csv", m, o),
                          "ParseBurstGptTrace", m.max_requests);
      break;
    }
    default: {
      const RequestJsonlOptions o = fuzz::JsonlOptions(in);
      auto w = ParseRequestJsonl(input.text, "fuzz.jsonl", o);
      // Its names are fewer than kUsers/kClasses, so the check is stricter.
      fuzz::CheckWorkload(w, "ParseRequestJsonl", o.max_requests);
      break;
    }
  }
  return 0;
}

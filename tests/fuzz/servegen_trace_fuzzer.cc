// servegen_trace_fuzzer: the input is a ServeGen client file's content
// (servegen_trace.h). ParseServeGenClient must answer with windows or a
// Status; windows it accepts are then sampled over a replay span picked by
// the control line (control_line.h; empty: the first hour at the trace's
// rates), with a small request_cap, and the sampler must
// stop (no hang on degenerate fits), respect the cap and keep every arrival
// inside the span.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "hearth/sim/servegen_trace.h"
#include "tests/fuzz/control_line.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/hostile_values.h"

namespace {

constexpr int64_t kRequestCap = 4096;

struct Replay {
  absl::Duration start = absl::ZeroDuration();
  absl::Duration duration = absl::Hours(1);
  double rate_scale = 1;
  uint64_t seed = 1;
};

Replay AnyReplay(FuzzedDataProvider& in) {
  Replay r;
  if (!in.ConsumeBool()) return r;
  r.start = absl::Seconds(in.ConsumeIntegralInRange<int64_t>(0, 14 * 86400));
  r.duration = hearth::fuzz::SmallOrEdgeDuration(in, 4 * 3600 * 1000);
  r.rate_scale = hearth::fuzz::SmallOrEdgeDouble(in, 1e-6, 10);
  r.seed = in.ConsumeIntegral<uint64_t>();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hearth;
  const fuzz::ControlledInput input = fuzz::SplitControlLine(data, size);
  FuzzedDataProvider in(reinterpret_cast<const uint8_t*>(input.control.data()),
                        input.control.size());
  const Replay replay = AnyReplay(in);
  absl::StatusOr<std::vector<ServeGenWindow>> windows =
      ParseServeGenClient(input.text, "chunk.csv");
  fuzz::Note("ParseServeGenClient", windows.status());
  if (!windows.ok()) {
    fuzz::Require(!windows.status().message().empty(), "ParseServeGenClient failed without a message");
    return 0;
  }
  absl::StatusOr<std::vector<absl::Duration>> arrivals =
      SampleServeGenArrivals(*windows, replay.start, replay.duration, replay.rate_scale,
                             replay.seed, kRequestCap);
  fuzz::Note("SampleServeGenArrivals", arrivals.status());
  if (!arrivals.ok()) return 0;
  fuzz::Require(static_cast<int64_t>(arrivals->size()) <= kRequestCap,
                absl::StrCat(arrivals->size(), " arrivals, over the cap"));
  for (absl::Duration at : *arrivals) {
    fuzz::Require(at >= absl::ZeroDuration() && at <= replay.duration,
                  absl::StrCat("an arrival at ", absl::FormatDuration(at), " outside [0, ",
                               absl::FormatDuration(replay.duration), "]"));
  }
  return 0;
}

// File: hearth/sim/burstgpt_trace.h
//
// Reader for BurstGPT (Wang et al., "BurstGPT", KDD'25;
// github.com/HPMLL/BurstGPT): CSV with the header
//   Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
// one request per row: seconds since the trace start, the model it asked
// for (ChatGPT or GPT-4), prompt and response lengths, their sum, and
// "Conversation log" or "API log".
//
// Failed requests are logged with 0 response tokens. The service still read
// their prompt, so by default they are replayed as a prefill and a single
// output token (kReplayPrefill); kSkip leaves them out. Rows become requests
// through a TraceMapping; arrivals are offsets from the first row. Malformed
// rows are errors naming the file, line and column.
//
// Example:
//   hearth::TraceMapping mapping;   // users and classes: see trace_mapping.h
//   hearth::BurstGptOptions o;
//   o.models = {"ChatGPT"};
//   absl::StatusOr<hearth::Workload> w =
//       hearth::LoadBurstGptTrace("BurstGPT_1.csv", mapping, o);

#ifndef HEARTH_SIM_BURSTGPT_TRACE_H_
#define HEARTH_SIM_BURSTGPT_TRACE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/sim/trace_mapping.h"
#include "hearth/sim/workload.h"

namespace hearth {

enum class FailedResponses { kReplayPrefill, kSkip };

struct BurstGptOptions {
  // Replay only rows whose Model is listed (empty: every row).
  std::vector<std::string> models;
  FailedResponses failed = FailedResponses::kReplayPrefill;
};

// `name` stands for the file in errors and labels.
absl::StatusOr<Workload> ParseBurstGptTrace(std::string_view text, const std::string& name,
                                            const TraceMapping& mapping,
                                            const BurstGptOptions& options = {});
absl::StatusOr<Workload> LoadBurstGptTrace(const std::string& path, const TraceMapping& mapping,
                                           const BurstGptOptions& options = {});

}  // namespace hearth

#endif  // HEARTH_SIM_BURSTGPT_TRACE_H_

// File: hearth/sim/mooncake_trace.h
//
// Reader for the Mooncake traces (Qin et al., "Mooncake", FAST'25;
// github.com/kvcache-ai/Mooncake, FAST25-release/traces): JSONL, one request
// per line,
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52,
//    "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2353, 2354]}
// `timestamp` is milliseconds since the trace start; `hash_ids` name the
// prompt's consecutive 512-token blocks, where equal ids mean equal content
// (and, as the ids are chained, an equal prefix up to that block). The last
// id covers whatever remains of input_length, possibly less than a block.
//
// Each row becomes a request through a TraceMapping (users, classes, window,
// speed); arrivals are offsets from the first row. The hash ids become the
// request's prefix_hashes (workload.h), so the simulator gives equal blocks
// equal token ids and the scheduler's prefix cache reuses them: one 512-token
// Mooncake block is 32 of Hearth's 16-token KV blocks. Rows are errors
// naming the file, line and field ("trace.jsonl:17: input_length ..."),
// never skipped silently. Keys other than these four are ignored.
//
// Example:
//   hearth::TraceMapping mapping;
//   absl::StatusOr<hearth::Workload> w =
//       hearth::LoadMooncakeTrace("conversation_trace.jsonl", mapping);

#ifndef HEARTH_SIM_MOONCAKE_TRACE_H_
#define HEARTH_SIM_MOONCAKE_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hearth/sim/trace_mapping.h"
#include "hearth/sim/workload.h"

namespace hearth {

// Tokens per hash id in the published traces.
inline constexpr int32_t kMooncakeBlockTokens = 512;

// `name` stands for the file in errors and labels. `block_tokens` (>= 1) is
// the tokens one hash id covers.
absl::StatusOr<Workload> ParseMooncakeTrace(std::string_view text, const std::string& name,
                                            const TraceMapping& mapping,
                                            int32_t block_tokens = kMooncakeBlockTokens);
absl::StatusOr<Workload> LoadMooncakeTrace(const std::string& path, const TraceMapping& mapping,
                                           int32_t block_tokens = kMooncakeBlockTokens);

}  // namespace hearth

#endif  // HEARTH_SIM_MOONCAKE_TRACE_H_

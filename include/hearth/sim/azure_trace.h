// File: hearth/sim/azure_trace.h
//
// Reader for the Azure LLM inference traces 2023 (Patel et al., "Splitwise",
// ISCA'24; ../shared/traces/azure2023): CSV with the header
// `TIMESTAMP,ContextTokens,GeneratedTokens`, one request per row, timestamps
// as `YYYY-MM-DD HH:MM:SS.fffffff`. ContextTokens is the prompt length and
// GeneratedTokens the (hidden) output length. Rows become requests through a
// TraceMapping; arrivals are offsets from the first row.
//
// Malformed rows are errors naming the file and line ("conv.csv:17: ...");
// nothing is skipped silently.
//
// Example:
//   hearth::TraceMapping mapping;   // users and classes: see trace_mapping.h
//   absl::StatusOr<hearth::Workload> w = hearth::LoadAzureTrace(
//       "traces/azure2023/AzureLLMInferenceTrace_conv.csv", mapping);

#ifndef HEARTH_SIM_AZURE_TRACE_H_
#define HEARTH_SIM_AZURE_TRACE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hearth/sim/trace_mapping.h"
#include "hearth/sim/workload.h"

namespace hearth {

// `name` stands for the file in errors and labels.
absl::StatusOr<Workload> ParseAzureTrace(std::string_view text,
                                         const std::string& name,
                                         const TraceMapping& mapping);
absl::StatusOr<Workload> LoadAzureTrace(const std::string& path,
                                        const TraceMapping& mapping);

}  // namespace hearth

#endif  // HEARTH_SIM_AZURE_TRACE_H_

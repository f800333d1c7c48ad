// File: hearth/sim/sharegpt_lengths.h
//
// Request lengths from a ShareGPT-style file, with generated arrivals. Two
// shapes are read, as one JSON list or as JSONL (one entry per line):
//   - conversations, as in ShareGPT dumps:
//       {"id": "x", "conversations": [{"from": "human", "value": "..."},
//                                     {"from": "gpt", "value": "..."}, ...]}
//     The first turn is the prompt and the second the answer (as vLLM's
//     benchmark reads them); lengths are UTF-8 bytes / bytes_per_token.
//     Conversations with fewer than two turns are skipped, as there.
//   - lengths: {"prompt_len": 812, "output_len": 64}.
// The file has no times: arrivals are a Poisson process at `rate_per_s`
// (seeded), entries taken in file order, then mapped like a trace's rows
// (users, classes, window, max_requests; time_scale also applies).
//
// Errors name the file and the entry: its line in JSONL ("lens.jsonl:17:
// prompt_len ..."), its index in a JSON list ("lens.json: [16]: prompt_len
// ...", nlohmann gives no positions for values; syntax errors do get a line).
//
// Example:
//   hearth::TraceMapping mapping;
//   hearth::ShareGptOptions o;
//   o.rate_per_s = 2;
//   absl::StatusOr<hearth::Workload> w =
//       hearth::LoadShareGptLengths("sharegpt.json", mapping, o);

#ifndef HEARTH_SIM_SHAREGPT_LENGTHS_H_
#define HEARTH_SIM_SHAREGPT_LENGTHS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hearth/sim/trace_mapping.h"
#include "hearth/sim/workload.h"

namespace hearth {

struct ShareGptOptions {
  // Mean arrivals per second, in [1e-6, 1e6]. The Poisson process is seeded by
  // the mapping's seed.
  double rate_per_s = 1.0;
  // For conversations, in (0, 100].
  double bytes_per_token = 4.0;
};

// `name` stands for the file in errors and labels.
absl::StatusOr<Workload> ParseShareGptLengths(std::string_view text, const std::string& name,
                                              const TraceMapping& mapping,
                                              const ShareGptOptions& options = {});
absl::StatusOr<Workload> LoadShareGptLengths(const std::string& path, const TraceMapping& mapping,
                                             const ShareGptOptions& options = {});

}  // namespace hearth

#endif  // HEARTH_SIM_SHAREGPT_LENGTHS_H_

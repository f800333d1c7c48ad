// File: hearth/sim/servegen_dataset.h
//
// A ServeGen client's length distributions (alibaba/ServeGen,
// data/<category>/<model>/chunk-<id>-dataset.json): a JSON object keyed by
// window start in seconds (windows of 6 h), each holding fields whose values
// are Python dict literals of a probability mass function, e.g.
//   {"21600": {"input_tokens": "{143: 0.0001, 148: 0.0002, ...}",
//              "output_tokens": "{18: 5.1e-05, ...}"}}
// A window whose input_tokens or output_tokens is "{}" has no data and is
// left out, as ServeGen's own loader does; other fields (reason_ratio, the
// multimodal counts) are ignored. A request at trace time t draws from the
// latest window starting at or before t.
//
// Example:
//   const std::string text = R"({"0": {"input_tokens": "{100: 1.0}",
//                                      "output_tokens": "{20: 1.0}"}})";
//   absl::StatusOr<std::vector<hearth::ServeGenLengthWindow>> d =
//       hearth::ParseServeGenDataset(text, "chunk-7-dataset.json");

#ifndef HEARTH_SIM_SERVEGEN_DATASET_H_
#define HEARTH_SIM_SERVEGEN_DATASET_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hearth {

// A discrete length distribution: lengths with their cumulative probability
// (ascending, last > 0; not necessarily 1: ServeGen's sums drift).
struct DiscreteLengths {
  std::vector<int32_t> tokens;
  std::vector<double> cumulative;
  // The length at cumulative fraction u in [0, 1).
  int32_t At(double u) const;
};

struct ServeGenLengthWindow {
  double start_s = 0;
  DiscreteLengths input;
  DiscreteLengths output;
};

// Windows in ascending start order. Errors name the file, the window and the
// field ("chunk-7-dataset.json: window \"21600\": input_tokens: ...").
absl::StatusOr<std::vector<ServeGenLengthWindow>> ParseServeGenDataset(std::string_view text,
                                                                       const std::string& name);

// The window for trace time `t_s`, or nullptr before the first.
const ServeGenLengthWindow* ServeGenWindowAt(const std::vector<ServeGenLengthWindow>& windows,
                                             double t_s);

}  // namespace hearth

#endif  // HEARTH_SIM_SERVEGEN_DATASET_H_

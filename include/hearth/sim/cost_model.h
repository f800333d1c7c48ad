// File: hearth/sim/cost_model.h
//
// `StepCostModel` answers "how long does this engine iteration take?" from
// the shape of the batch: for each scheduled sequence, how many positions it
// computes and how much context precedes them, plus bytes copied for swaps
// and copy-on-write. Implementations: RooflineCostModel (from datasheets) and
// FittedCostModel (from a measured profile).
//
// Example:
//   std::vector<hearth::SequenceWork> work = {{.context = 0, .tokens = 512},
//                                             {.context = 900, .tokens = 1,
//                                              .decode = true}};
//   absl::Duration t = cost_model.StepTime({.sequences = work});

#ifndef HEARTH_SIM_COST_MODEL_H_
#define HEARTH_SIM_COST_MODEL_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "absl/types/span.h"

namespace hearth {

struct SequenceWork {
  // Positions already in the KV cache before this step (start_position).
  int32_t context = 0;
  // Positions computed this step (num_tokens), >= 1.
  int32_t tokens = 0;
  // A decode step (one token after a complete prefix) rather than a prefill
  // chunk or recompute.
  bool decode = false;
};

struct StepWork {
  absl::Span<const SequenceWork> sequences;
  // Bytes copied between host and device (swap-out plus swap-in).
  int64_t host_copy_bytes = 0;
  // Bytes copied device to device (copy-on-write).
  int64_t device_copy_bytes = 0;
  // Encoder positions computed this step (StepPlan::num_encoder_tokens: a
  // photo's patches run through the vision encoder before the LLM reads
  // them). Embeddings need no term of their own: they are prefill chunks.
  int32_t encoder_tokens = 0;
};

class StepCostModel {
 public:
  virtual ~StepCostModel() = default;
  // Duration of one iteration. Zero for an empty step without copies.
  virtual absl::Duration StepTime(const StepWork& work) const = 0;
  // One line for reports, e.g. "roofline RTX 4090 / Llama-3.1-8B".
  virtual std::string Describe() const = 0;
};

}  // namespace hearth

#endif  // HEARTH_SIM_COST_MODEL_H_

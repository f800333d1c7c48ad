// File: hearth/sim/fitted_cost_model.h
//
// `FittedCostModel` prices an iteration with a linear model fitted to
// measurements, in the style of DistServe's and Vidur's step-time models:
//
//   time = c0 + base[T] + c1 * P + c2 * P^2 + c3 * D + c4 * K + c5 * T * K
//          + c6 * E
//
// where E is the positions the step's encoder computes (photos'
// patches: StepWork::encoder_tokens), P is the step's total prefill tokens (prompt chunks and recomputes),
// D the number of decode sequences, K the total KV context the step touches
// (sum over sequences of context + tokens) and T the tokens the step
// computes. c5 (optional, 0 without it) prices attention over the whole
// cache span, as llama.cpp's unified KV cache computes it (every token of a
// batch attends over all cells in use). base[T] (optional `base_by_tokens`,
// 0 without it) is a
// per-iteration cost by T: entry i for T = i + 1, the last entry for T at
// least that; CPU backends switch kernels by batch size, which no linear
// term follows. Copies are priced as in the roofline model when
// `host_link_bandwidth` / `memory_bandwidth` are given.
//
// Profile file (TOML; every key in seconds, all >= 0 and finite):
//
//   # Produced by the executor's profiler on an RTX 4090, Llama-3.1-8B BF16.
//   [fitted]
//   gpu = "RTX 4090"              # informational
//   model = "Llama-3.1-8B"        # informational
//   c0 = 0.0052                   # per iteration
//   c1 = 1.1e-4                   # per prefill token
//   c2 = 2.0e-9                   # per prefill token squared
//   c3 = 4.0e-5                   # per decode sequence
//   c4 = 1.3e-7                   # per token of KV context
//   c5 = 0                        # optional, per token x KV context token
//   c6 = 0                        # optional, per encoder position
//   base_by_tokens = [3.4e-3, 1.1e-2]   # optional, per iteration by T
//   host_link_bandwidth = 25e9    # optional, bytes/s, for swaps
//   memory_bandwidth = 1.008e12   # optional, bytes/s, for copy-on-write
//
// c0..c4 are required; base_by_tokens has at most 256 entries, each finite
// and >= 0. Errors name the file, line and key.
//
// Example:
//   absl::StatusOr<std::unique_ptr<hearth::FittedCostModel>> m =
//       hearth::FittedCostModel::LoadProfile("profiles/rtx4090_llama8b.toml");

#ifndef HEARTH_SIM_FITTED_COST_MODEL_H_
#define HEARTH_SIM_FITTED_COST_MODEL_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/sim/cost_model.h"

namespace hearth {

struct FittedCoefficients {
  double c0 = 0;  // s
  double c1 = 0;  // s per prefill token
  double c2 = 0;  // s per prefill token^2
  double c3 = 0;  // s per decode sequence
  double c4 = 0;  // s per KV context token
  double c5 = 0;  // s per computed token x KV context token
  double c6 = 0;  // s per encoder position
  // s per iteration by tokens computed (see the file comment); empty: none.
  std::vector<double> base_by_tokens;
  double host_link_bandwidth = 25e9;
  double memory_bandwidth = 1e12;
  std::string gpu;
  std::string model;
};

class FittedCostModel : public StepCostModel {
 public:
  // InvalidArgument when a coefficient or base_by_tokens entry is negative
  // or not finite, base_by_tokens has more than 256 entries, or c0..c4 and
  // base_by_tokens are all zero.
  static absl::StatusOr<std::unique_ptr<FittedCostModel>> Create(
      const FittedCoefficients& c);
  // Reads a profile file (format above). NotFound when unreadable;
  // InvalidArgument "file:line: key: what" on a bad file.
  static absl::StatusOr<std::unique_ptr<FittedCostModel>> LoadProfile(
      const std::string& path);
  // Same, from text; `source_name` stands for the file name in errors.
  static absl::StatusOr<std::unique_ptr<FittedCostModel>> ParseProfile(
      std::string_view text, const std::string& source_name);

  absl::Duration StepTime(const StepWork& work) const override;
  std::string Describe() const override;
  const FittedCoefficients& coefficients() const { return c_; }

 private:
  explicit FittedCostModel(FittedCoefficients c) : c_(std::move(c)) {}
  FittedCoefficients c_;
};

}  // namespace hearth

#endif  // HEARTH_SIM_FITTED_COST_MODEL_H_

// File: src/exec/step_cost_fit.h
//
// Fits the simulator's per-iteration cost model (hearth/sim/fitted_cost_model.h)
//   time = c0 + base[T] + c1 * P + c2 * P^2 + c3 * D + c4 * K + c5 * T * K
//          + c6 * E
// to measured steps (P prefill tokens, D decode sequences, K total KV context
// = sum over sequences of start_position + num_tokens, T = P + D tokens the
// step computes, E positions its encoder computes for photos; samples
// without encoder work leave c6 at 0), and writes the profile file the simulator loads. c5 is
// attention over the whole cache span: llama.cpp's unified KV cache has
// every token of a batch attend over all cells in use, other sequences'
// masked, so a step costs T x K there; a paged engine's fit leaves it ~0. With
// `batch_buckets` = B > 0, base[T] is fitted per token count (T = 1 .. B-1,
// and one value for T >= B) in place of c0: CPU backends switch kernels by
// batch size (a lone decode runs matrix-vector products, two run
// matrix-matrix ones at several times the cost), which no term linear in D
// follows. Token counts no sample has are interpolated between neighbours. The fit minimises squared *relative*
// error (what the held-out check reports) with non-negative coefficients
// (the profile format requires them). Used by the GPU calibration program;
// plain C++, so it is tested on every machine. Not part of the public API.

#ifndef HEARTH_EXEC_STEP_COST_FIT_H_
#define HEARTH_EXEC_STEP_COST_FIT_H_

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hearth::exec_internal {

struct StepCostSample {
  double prefill_tokens = 0;  // P
  double decode_seqs = 0;     // D
  double kv_context = 0;      // K
  double seconds = 0;         // measured, > 0
  double encoder_tokens = 0;  // E
};

struct StepCostFit {
  // c0..c6, all >= 0.
  std::array<double, 7> c = {0, 0, 0, 0, 0, 0, 0};
  // base[T] by token count (FittedCoefficients::base_by_tokens); empty when
  // not fitted.
  std::vector<double> base_by_tokens;
  double Base(const StepCostSample& s) const {
    if (base_by_tokens.empty()) return 0;
    const auto t = static_cast<size_t>(std::max(1.0, s.prefill_tokens + s.decode_seqs));
    return base_by_tokens[std::min(t, base_by_tokens.size()) - 1];
  }
  double Predict(const StepCostSample& s) const {
    return c[0] + Base(s) + c[1] * s.prefill_tokens +
           c[2] * s.prefill_tokens * s.prefill_tokens + c[3] * s.decode_seqs +
           c[4] * s.kv_context + c[5] * (s.prefill_tokens + s.decode_seqs) * s.kv_context +
           c[6] * s.encoder_tokens;
  }
};

// The largest batch_buckets FitStepCost takes.
inline constexpr int kMaxBatchBuckets = 64;

// InvalidArgument with fewer samples than terms, a non-positive or
// non-finite time, batch_buckets outside [0, kMaxBatchBuckets], or samples
// that cannot determine any coefficient.
absl::StatusOr<StepCostFit> FitStepCost(absl::Span<const StepCostSample> samples,
                                        int batch_buckets = 0);

struct RelativeError {
  double mean = 0;  // mean |predicted - measured| / measured
  double max = 0;
};
RelativeError FitError(const StepCostFit& fit,
                       absl::Span<const StepCostSample> samples);

// Everything the profile records besides the coefficients.
struct ProfileInfo {
  std::string gpu;
  std::string model;
  // Free-text comment lines (without '#').
  std::vector<std::string> comments;
  // Optional (written when > 0), bytes per second.
  double host_link_bandwidth = 0;
  double memory_bandwidth = 0;
};

// The profile as TOML text in FittedCostModel's format ([fitted] table).
std::string FormatStepCostProfile(const StepCostFit& fit, const ProfileInfo& info);

}  // namespace hearth::exec_internal

#endif  // HEARTH_EXEC_STEP_COST_FIT_H_

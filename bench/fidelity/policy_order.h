// File: bench/fidelity/policy_order.h
//
// Whether the simulator orders two policies as the real engine does, on one
// figure where lower is better (voice p90 TTFT), judged over repeated real
// runs. One real run per policy cannot tell an order from run-to-run noise:
// on a shared CPU two runs of the same policy differ by about 6%, as much as
// the policies did on a workload where neither had anything to act on. So a
// real order needs every run of one policy below every run of the other, and
// the simulator's difference counts as an order only beyond the spread the
// real runs showed. Nothing here times anything.
//
// Example:
//   absl::StatusOr<RunsOrder> o =
//       JudgeOrder({2.6, 2.7, 2.5}, {0.44, 0.41, 0.47}, 0.54, 0.20, 0.05);
//   // o->real == o->sim == Order::kSecondBetter; o->same() is true

#ifndef HEARTH_BENCH_FIDELITY_POLICY_ORDER_H_
#define HEARTH_BENCH_FIDELITY_POLICY_ORDER_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "bench/fidelity/fidelity_stats.h"

namespace hearth::fidelity {

struct RunsOrder {
  Order real = Order::kTie;
  Order sim = Order::kTie;
  // The larger policy's (max - min) / median over its real runs: how far
  // repeated runs of one policy disagree.
  double real_spread = 0;
  // The relative difference the simulator must exceed to order the two:
  // real_spread, but at least the floor JudgeOrder was given.
  double band = 0;
  bool same() const { return real == sim; }
};

// JudgeOrder()
//
// Real order: the policy whose every run lies below every run of the other,
// the gap between the two ranges above `min_band` of the larger end; a tie
// when the ranges overlap or lie closer (so one run each falls back to
// OrderOf with `min_band`). Simulated order: OrderOf(sim_first, sim_second,
// band). InvalidArgument when a list of runs is empty, a value is not finite
// and > 0, or `min_band` is not in [0, 1).
absl::StatusOr<RunsOrder> JudgeOrder(absl::Span<const double> real_first,
                                     absl::Span<const double> real_second, double sim_first,
                                     double sim_second, double min_band);

}  // namespace hearth::fidelity

#endif  // HEARTH_BENCH_FIDELITY_POLICY_ORDER_H_

// File: hearth/metrics/fairness.h
//
// Fairness measures over users' service.
//
// JainIndex(x) = (sum x)^2 / (n * sum x^2): 1 when every user got the same
// (weight-normalised) service, 1/n when one user got everything.
//
// `ServiceGapTracker` measures VTC's fairness quantity (Sheng et al., "Fairness
// in Serving Large Language Models", OSDI'24): the largest difference in
// service two users received over any interval during which both were
// backlogged. For a pair f, g and D(t) = S_f(t) - S_g(t), the difference over
// [t1, t2] is D(t2) - D(t1), so over one joint-backlog period the largest
// |difference| is max D - min D in that period. The tracker keeps, per pair,
// the running min and max of D since the period began: O(users^2) per update,
// which is why it is bounded by `max_users`.
//
// Example:
//   hearth::ServiceGapTracker gap(2);
//   gap.Update({10.0, 0.0}, {true, true});
//   gap.Update({10.0, 30.0}, {true, true});
//   gap.max_gap();   // 30: over the period D went from 10 to -20

#ifndef HEARTH_METRICS_FAIRNESS_H_
#define HEARTH_METRICS_FAIRNESS_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace hearth {

// Jain's fairness index of `values`; 1 for an empty or all-zero input.
double JainIndex(absl::Span<const double> values);

class ServiceGapTracker {
 public:
  explicit ServiceGapTracker(int num_users);

  // `service[u]` is user u's cumulative (weight-normalised) service so far;
  // `backlogged[u]` whether u has work waiting now. Both sized num_users.
  void Update(absl::Span<const double> service,
              absl::Span<const bool> backlogged);

  // Largest gap seen so far (0 before any joint backlog).
  double max_gap() const { return max_gap_; }
  int num_users() const { return num_users_; }

 private:
  struct PairState {
    bool in_period = false;
    double min_d = 0;
    double max_d = 0;
  };
  int num_users_;
  std::vector<PairState> pairs_;  // upper triangle, row-major
  double max_gap_ = 0;
};

}  // namespace hearth

#endif  // HEARTH_METRICS_FAIRNESS_H_

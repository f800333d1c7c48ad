// The policy-order verdict over repeated real runs (see policy_order.h).

#include "bench/fidelity/policy_order.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_format.h"

namespace hearth::fidelity {
namespace {

absl::Status CheckPositive(absl::Span<const double> values, const char* what) {
  if (values.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("JudgeOrder: no %s; give at least one run", what));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!(values[i] > 0) || !std::isfinite(values[i])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "JudgeOrder: %s[%d] is %g; must be finite and > 0", what, i, values[i]));
    }
  }
  return absl::OkStatus();
}

double RelativeRange(absl::Span<const double> runs) {
  const auto [lo, hi] = std::minmax_element(runs.begin(), runs.end());
  return (*hi - *lo) / Quantile(runs, 0.5);
}

}  // namespace

absl::StatusOr<RunsOrder> JudgeOrder(absl::Span<const double> real_first,
                                     absl::Span<const double> real_second, double sim_first,
                                     double sim_second, double min_band) {
  if (absl::Status s = CheckPositive(real_first, "real_first"); !s.ok()) return s;
  if (absl::Status s = CheckPositive(real_second, "real_second"); !s.ok()) return s;
  const double sims[] = {sim_first, sim_second};
  if (absl::Status s = CheckPositive(sims, "simulated"); !s.ok()) return s;
  if (!(min_band >= 0 && min_band < 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("JudgeOrder: min_band is %g; must be in [0, 1)", min_band));
  }
  RunsOrder o;
  o.real_spread = std::max(RelativeRange(real_first), RelativeRange(real_second));
  o.band = std::max(min_band, o.real_spread);
  const auto [first_lo, first_hi] = std::minmax_element(real_first.begin(), real_first.end());
  const auto [second_lo, second_hi] = std::minmax_element(real_second.begin(), real_second.end());
  // Compares the nearest ends of the two ranges, as OrderOf compares two values.
  if (*first_hi < *second_lo) {
    o.real = OrderOf(*first_hi, *second_lo, min_band);
  } else if (*second_hi < *first_lo) {
    o.real = OrderOf(*first_lo, *second_hi, min_band);
  }
  o.sim = OrderOf(sim_first, sim_second, o.band);
  return o;
}

}  // namespace hearth::fidelity

// Quantiles, error summaries and request pairing for the fidelity check (see
// fidelity_stats.h).

#include "bench/fidelity/fidelity_stats.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"

namespace hearth::fidelity {

double Quantile(absl::Span<const double> values, double q) {
  if (values.empty()) return 0;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  q = std::clamp(q, 0.0, 1.0);
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

ErrorSummary Summarize(absl::Span<const double> values) {
  ErrorSummary s;
  s.count = values.size();
  if (values.empty()) return s;
  s.median = Quantile(values, 0.5);
  s.p90 = Quantile(values, 0.9);
  for (double v : values) {
    s.mean += v;
    s.max = std::max(s.max, v);
  }
  s.mean /= static_cast<double>(values.size());
  return s;
}

absl::StatusOr<std::vector<double>> RelativeErrors(absl::Span<const double> predicted,
                                                   absl::Span<const double> measured) {
  if (predicted.size() != measured.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "RelativeErrors: %d predicted values but %d measured", predicted.size(), measured.size()));
  }
  std::vector<double> out;
  out.reserve(measured.size());
  for (size_t i = 0; i < measured.size(); ++i) {
    if (!(measured[i] > 0) || !std::isfinite(measured[i])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "RelativeErrors: measured[%d] is %g; must be finite and > 0", i, measured[i]));
    }
    out.push_back(std::fabs(predicted[i] - measured[i]) / measured[i]);
  }
  return out;
}

Spread SpreadOf(absl::Span<const double> samples) {
  Spread s;
  s.median = Quantile(samples, 0.5);
  s.p10 = Quantile(samples, 0.1);
  s.p90 = Quantile(samples, 0.9);
  s.relative = s.median > 0 ? (s.p90 - s.p10) / s.median : 0;
  return s;
}

bool IsHeldOut(size_t index) { return ((index * 2654435761ull) >> 7) % 4 == 0; }

absl::StatusOr<ReplayComparison> CompareRequests(absl::Span<const RequestLatency> real,
                                                 absl::Span<const RequestLatency> simulated) {
  absl::flat_hash_map<int64_t, const RequestLatency*> sim_by_index;
  for (const RequestLatency& s : simulated) {
    if (!sim_by_index.emplace(s.index, &s).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("CompareRequests: simulated request %d appears twice", s.index));
    }
  }
  if (real.size() != simulated.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CompareRequests: %d real requests but %d simulated", real.size(), simulated.size()));
  }
  std::vector<double> real_ttft, sim_ttft, real_e2e, sim_e2e;
  absl::flat_hash_map<int64_t, bool> seen;
  for (const RequestLatency& r : real) {
    if (!seen.emplace(r.index, true).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("CompareRequests: real request %d appears twice", r.index));
    }
    auto it = sim_by_index.find(r.index);
    if (it == sim_by_index.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("CompareRequests: request %d did not end in the simulation", r.index));
    }
    real_ttft.push_back(r.ttft);
    sim_ttft.push_back(it->second->ttft);
    real_e2e.push_back(r.e2e);
    sim_e2e.push_back(it->second->e2e);
  }
  absl::StatusOr<std::vector<double>> ttft = RelativeErrors(sim_ttft, real_ttft);
  if (!ttft.ok()) return ttft.status();
  absl::StatusOr<std::vector<double>> e2e = RelativeErrors(sim_e2e, real_e2e);
  if (!e2e.ok()) return e2e.status();
  ReplayComparison c;
  c.requests = real.size();
  c.ttft = Summarize(*ttft);
  c.e2e = Summarize(*e2e);
  return c;
}

double ClassTtftQuantile(absl::Span<const RequestLatency> run, const std::string& work_class,
                         double q) {
  std::vector<double> v;
  for (const RequestLatency& r : run) {
    if (r.work_class == work_class) v.push_back(r.ttft);
  }
  return Quantile(v, q);
}

Order OrderOf(double first, double second, double tie_fraction) {
  if (std::fabs(first - second) <= tie_fraction * std::max(std::fabs(first), std::fabs(second))) {
    return Order::kTie;
  }
  return first < second ? Order::kFirstBetter : Order::kSecondBetter;
}

const char* OrderName(Order order) {
  switch (order) {
    case Order::kFirstBetter: return "first lower";
    case Order::kSecondBetter: return "second lower";
    case Order::kTie: return "tie";
  }
  return "?";
}

}  // namespace hearth::fidelity

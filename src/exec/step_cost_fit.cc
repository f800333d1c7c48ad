// Non-negative, relative-error least squares for the step cost model (see
// step_cost_fit.h).

#include "exec/step_cost_fit.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hearth::exec_internal {
namespace {

constexpr int kTerms = 5;

std::array<double, kTerms> Features(const StepCostSample& s) {
  return {1.0, s.prefill_tokens, s.prefill_tokens * s.prefill_tokens,
          s.decode_seqs, s.kv_context};
}

// Solves the normal equations of min sum_i ((f_i . c) / y_i - 1)^2 over the
// terms in `active` (others fixed at 0). Columns are scaled to unit norm
// first, so P^2 (up to ~1e7) and the constant are equally conditioned.
// Returns false when the system is singular.
bool SolveActive(absl::Span<const StepCostSample> samples,
                 const std::array<bool, kTerms>& active,
                 std::array<double, kTerms>* c) {
  std::vector<int> cols;
  for (int j = 0; j < kTerms; ++j) if (active[j]) cols.push_back(j);
  const int n = static_cast<int>(cols.size());
  std::vector<double> scale(n, 0.0);
  for (const StepCostSample& s : samples) {
    const auto f = Features(s);
    for (int a = 0; a < n; ++a) {
      const double v = f[cols[a]] / s.seconds;
      scale[a] += v * v;
    }
  }
  for (double& v : scale) {
    if (v <= 0) return false;
    v = 1.0 / std::sqrt(v);
  }
  // Augmented normal matrix [A^T A | A^T b] in scaled columns.
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1, 0.0));
  for (const StepCostSample& s : samples) {
    const auto f = Features(s);
    for (int a = 0; a < n; ++a) {
      const double fa = f[cols[a]] / s.seconds * scale[a];
      for (int b = 0; b < n; ++b) m[a][b] += fa * f[cols[b]] / s.seconds * scale[b];
      m[a][n] += fa;  // target 1
    }
  }
  // Gaussian elimination with partial pivoting.
  for (int k = 0; k < n; ++k) {
    int pivot = k;
    for (int r = k + 1; r < n; ++r) {
      if (std::fabs(m[r][k]) > std::fabs(m[pivot][k])) pivot = r;
    }
    if (std::fabs(m[pivot][k]) < 1e-12) return false;
    std::swap(m[k], m[pivot]);
    for (int r = k + 1; r < n; ++r) {
      const double f = m[r][k] / m[k][k];
      for (int col = k; col <= n; ++col) m[r][col] -= f * m[k][col];
    }
  }
  std::vector<double> x(n);
  for (int k = n - 1; k >= 0; --k) {
    double v = m[k][n];
    for (int col = k + 1; col < n; ++col) v -= m[k][col] * x[col];
    x[k] = v / m[k][k];
  }
  c->fill(0.0);
  for (int a = 0; a < n; ++a) (*c)[cols[a]] = x[a] * scale[a];
  return true;
}

}  // namespace

absl::StatusOr<StepCostFit> FitStepCost(absl::Span<const StepCostSample> samples) {
  if (samples.size() < kTerms) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "FitStepCost: %d samples; at least %d are needed", samples.size(), kTerms));
  }
  std::array<bool, kTerms> active;
  active.fill(true);
  for (size_t i = 0; i < samples.size(); ++i) {
    const StepCostSample& s = samples[i];
    if (!(s.seconds > 0) || !std::isfinite(s.seconds) || s.prefill_tokens < 0 ||
        s.decode_seqs < 0 || s.kv_context < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "FitStepCost: sample %d has seconds %g, P %g, D %g, K %g (allowed: "
          "seconds finite and > 0, counts >= 0)",
          i, s.seconds, s.prefill_tokens, s.decode_seqs, s.kv_context));
    }
  }
  // Terms no sample exercises stay at 0 instead of making the system singular.
  for (int j = 1; j < kTerms; ++j) {
    bool used = false;
    for (const StepCostSample& s : samples) used = used || Features(s)[j] != 0;
    active[j] = used;
  }
  // Active set: solve, drop the most negative term, repeat. With five terms
  // this ends after at most five solves.
  StepCostFit fit;
  for (int round = 0; round < kTerms; ++round) {
    if (!SolveActive(samples, active, &fit.c)) {
      return absl::InvalidArgumentError(
          "FitStepCost: the samples do not determine the coefficients (vary "
          "prefill tokens, decode batch and context independently)");
    }
    int worst = -1;
    for (int j = 0; j < kTerms; ++j) {
      if (active[j] && fit.c[j] < 0 && (worst < 0 || fit.c[j] < fit.c[worst])) worst = j;
    }
    if (worst < 0) return fit;
    active[worst] = false;
  }
  return absl::InternalError("FitStepCost: active set did not settle");
}

RelativeError FitError(const StepCostFit& fit,
                       absl::Span<const StepCostSample> samples) {
  RelativeError e;
  for (const StepCostSample& s : samples) {
    const double r = std::fabs(fit.Predict(s) - s.seconds) / s.seconds;
    e.mean += r;
    e.max = std::max(e.max, r);
  }
  if (!samples.empty()) e.mean /= static_cast<double>(samples.size());
  return e;
}

std::string FormatStepCostProfile(const StepCostFit& fit, const ProfileInfo& info) {
  auto quoted = [](const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
      if (ch == '"' || ch == '\\') out += '\\';
      if (ch != '\n') out += ch;
    }
    return out + "\"";
  };
  std::string t;
  for (const std::string& line : info.comments) absl::StrAppend(&t, "# ", line, "\n");
  absl::StrAppend(&t, "[fitted]\n");
  absl::StrAppend(&t, "gpu = ", quoted(info.gpu), "\n");
  absl::StrAppend(&t, "model = ", quoted(info.model), "\n");
  static constexpr const char* kNames[kTerms] = {"c0", "c1", "c2", "c3", "c4"};
  static constexpr const char* kUnits[kTerms] = {
      "s per iteration", "s per prefill token", "s per prefill token squared",
      "s per decode sequence", "s per token of KV context"};
  for (int j = 0; j < kTerms; ++j) {
    absl::StrAppend(&t, absl::StrFormat("%s = %.6e  # %s\n", kNames[j], fit.c[j], kUnits[j]));
  }
  if (info.host_link_bandwidth > 0) {
    absl::StrAppend(&t, absl::StrFormat("host_link_bandwidth = %.6e  # bytes/s\n",
                                        info.host_link_bandwidth));
  }
  if (info.memory_bandwidth > 0) {
    absl::StrAppend(&t, absl::StrFormat("memory_bandwidth = %.6e  # bytes/s\n",
                                        info.memory_bandwidth));
  }
  return t;
}

}  // namespace hearth::exec_internal

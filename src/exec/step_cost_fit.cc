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

// The fit's columns: the intercept (c0), or one indicator per token-count
// bucket, then P, P^2, D, K, T x K and E.
class Terms {
 public:
  explicit Terms(int buckets) : buckets_(buckets) {}
  int intercepts() const { return buckets_ > 0 ? buckets_ : 1; }
  int size() const { return intercepts() + kSlopes; }
  static constexpr int kSlopes = 6;
  void Fill(const StepCostSample& s, std::vector<double>& f) const {
    f.assign(static_cast<size_t>(size()), 0.0);
    if (buckets_ > 0) {
      const int t = static_cast<int>(std::max(1.0, s.prefill_tokens + s.decode_seqs));
      f[static_cast<size_t>(std::min(t, buckets_) - 1)] = 1.0;
    } else {
      f[0] = 1.0;
    }
    const size_t k = static_cast<size_t>(intercepts());
    f[k] = s.prefill_tokens;
    f[k + 1] = s.prefill_tokens * s.prefill_tokens;
    f[k + 2] = s.decode_seqs;
    f[k + 3] = s.kv_context;
    f[k + 4] = (s.prefill_tokens + s.decode_seqs) * s.kv_context;
    f[k + 5] = s.encoder_tokens;
  }

 private:
  int buckets_;
};

// Solves the normal equations of min sum_i ((f_i . c) / y_i - 1)^2 over the
// terms in `active` (others fixed at 0). Columns are scaled to unit norm
// first, so P^2 (up to ~1e7) and the constant are equally conditioned.
// Returns false when the system is singular.
bool SolveActive(absl::Span<const StepCostSample> samples, const Terms& terms,
                 const std::vector<bool>& active, std::vector<double>* c) {
  std::vector<int> cols;
  for (int j = 0; j < terms.size(); ++j) if (active[static_cast<size_t>(j)]) cols.push_back(j);
  const int n = static_cast<int>(cols.size());
  std::vector<double> f;
  std::vector<double> scale(n, 0.0);
  for (const StepCostSample& s : samples) {
    terms.Fill(s, f);
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
    terms.Fill(s, f);
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
  c->assign(static_cast<size_t>(terms.size()), 0.0);
  for (int a = 0; a < n; ++a) (*c)[static_cast<size_t>(cols[a])] = x[a] * scale[a];
  return true;
}

// Token counts no sample had: linear between the nearest ones that had
// samples, or the nearest one beyond the ends.
void FillUnobserved(const std::vector<bool>& observed, std::vector<double>& base) {
  const int n = static_cast<int>(base.size());
  for (int t = 0; t < n; ++t) {
    if (observed[static_cast<size_t>(t)]) continue;
    int lo = t - 1, hi = t + 1;
    while (lo >= 0 && !observed[static_cast<size_t>(lo)]) --lo;
    while (hi < n && !observed[static_cast<size_t>(hi)]) ++hi;
    if (lo >= 0 && hi < n) {
      const double w = static_cast<double>(t - lo) / (hi - lo);
      base[static_cast<size_t>(t)] = base[static_cast<size_t>(lo)] * (1 - w) + base[static_cast<size_t>(hi)] * w;
    } else if (lo >= 0) {
      base[static_cast<size_t>(t)] = base[static_cast<size_t>(lo)];
    } else if (hi < n) {
      base[static_cast<size_t>(t)] = base[static_cast<size_t>(hi)];
    }
  }
}

}  // namespace

absl::StatusOr<StepCostFit> FitStepCost(absl::Span<const StepCostSample> samples,
                                        int batch_buckets) {
  if (batch_buckets < 0 || batch_buckets > kMaxBatchBuckets) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "FitStepCost: batch_buckets %d is outside [0, %d]", batch_buckets, kMaxBatchBuckets));
  }
  const Terms terms(batch_buckets);
  const int num_terms = terms.size();
  if (samples.size() < static_cast<size_t>(std::min(num_terms, 5))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "FitStepCost: %d samples; at least %d are needed", samples.size(), 5));
  }
  for (size_t i = 0; i < samples.size(); ++i) {
    const StepCostSample& s = samples[i];
    if (!(s.seconds > 0) || !std::isfinite(s.seconds) || s.prefill_tokens < 0 ||
        s.decode_seqs < 0 || s.kv_context < 0 || !(s.encoder_tokens >= 0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "FitStepCost: sample %d has seconds %g, P %g, D %g, K %g, E %g (allowed: "
          "seconds finite and > 0, counts >= 0)",
          i, s.seconds, s.prefill_tokens, s.decode_seqs, s.kv_context, s.encoder_tokens));
    }
  }
  // Terms no sample exercises stay at 0 instead of making the system
  // singular (the intercept always is exercised without buckets).
  std::vector<bool> active(static_cast<size_t>(num_terms), false);
  std::vector<double> f;
  for (const StepCostSample& s : samples) {
    terms.Fill(s, f);
    for (int j = 0; j < num_terms; ++j) {
      if (f[static_cast<size_t>(j)] != 0) active[static_cast<size_t>(j)] = true;
    }
  }
  const int k = terms.intercepts();
  const std::vector<bool> observed(active.begin(), active.begin() + k);
  // Active set: solve, drop the most negative term, repeat; at most one
  // round per term.
  std::vector<double> c;
  for (int round = 0; round <= num_terms; ++round) {
    if (!SolveActive(samples, terms, active, &c)) {
      return absl::InvalidArgumentError(
          "FitStepCost: the samples do not determine the coefficients (vary "
          "prefill tokens, decode batch and context independently)");
    }
    int worst = -1;
    for (int j = 0; j < num_terms; ++j) {
      const auto u = static_cast<size_t>(j);
      if (active[u] && c[u] < 0 && (worst < 0 || c[u] < c[static_cast<size_t>(worst)])) worst = j;
    }
    if (worst < 0) {
      StepCostFit fit;
      if (batch_buckets > 0) {
        fit.base_by_tokens.assign(c.begin(), c.begin() + k);
        FillUnobserved(observed, fit.base_by_tokens);
      } else {
        fit.c[0] = c[0];
      }
      for (int j = 0; j < Terms::kSlopes; ++j) {
        fit.c[static_cast<size_t>(j + 1)] = c[static_cast<size_t>(k + j)];
      }
      return fit;
    }
    active[static_cast<size_t>(worst)] = false;
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
  static constexpr const char* kNames[7] = {"c0", "c1", "c2", "c3", "c4", "c5", "c6"};
  static constexpr const char* kUnits[7] = {
      "s per iteration", "s per prefill token", "s per prefill token squared",
      "s per decode sequence", "s per token of KV context",
      "s per computed token x token of KV context", "s per encoder position"};
  for (int j = 0; j < 7; ++j) {
    absl::StrAppend(&t, absl::StrFormat("%s = %.6e  # %s\n", kNames[j], fit.c[j], kUnits[j]));
  }
  if (!fit.base_by_tokens.empty()) {
    absl::StrAppend(&t, "# s per iteration by tokens computed: 1, 2, ..., and the last for more\n");
    absl::StrAppend(&t, "base_by_tokens = [");
    for (size_t i = 0; i < fit.base_by_tokens.size(); ++i) {
      absl::StrAppend(&t, i == 0 ? "" : ", ", absl::StrFormat("%.6e", fit.base_by_tokens[i]));
    }
    absl::StrAppend(&t, "]\n");
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

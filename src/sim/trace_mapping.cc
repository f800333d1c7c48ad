#include "hearth/sim/trace_mapping.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "sim/sim_random.h"

namespace hearth {

absl::Status ValidateTraceMapping(const TraceMapping& m) {
  if (m.users.empty()) {
    return absl::InvalidArgumentError("trace mapping: users must not be empty");
  }
  if (!m.user_shares.empty() && m.user_shares.size() != m.users.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trace mapping: user_shares has ", m.user_shares.size(),
        " entries; must be empty or one per user (", m.users.size(), ")"));
  }
  for (double s : m.user_shares) {
    if (!(s > 0) || !std::isfinite(s)) {
      return absl::InvalidArgumentError(
          "trace mapping: user_shares must be finite and > 0");
    }
  }
  // Within these bounds every arrival stays finite: rows span less than
  // 230 years (azure_trace.cc), 7.3e15 s at the slowest, far from a
  // Duration's 9.2e18 s.
  if (!(m.time_scale >= kMinTimeScale && m.time_scale <= kMaxTimeScale)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trace mapping: time_scale is ", m.time_scale, "; must be in [", kMinTimeScale,
        ", ", kMaxTimeScale, "]"));
  }
  if (m.skip < absl::ZeroDuration() || m.duration <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "trace mapping: skip must be >= 0 and duration > 0");
  }
  if (m.max_requests < 0) {
    return absl::InvalidArgumentError("trace mapping: max_requests must be >= 0");
  }
  return absl::OkStatus();
}

TraceRowMapper::TraceRowMapper(const TraceMapping& m)
    : m_(m), rng_(internal::SimRandom(m.seed).Next()) {
  double sum = 0;
  for (size_t i = 0; i < m.users.size(); ++i) {
    sum += m.user_shares.empty() ? 1.0 : m.user_shares[i];
    cumulative_.push_back(sum);
  }
}

uint32_t TraceRowMapper::NextUser() {
  const uint64_t row = row_++;
  if (m_.assignment == UserAssignment::kRoundRobin) {
    return m_.users[row % m_.users.size()];
  }
  // Counter-based draw: row r's user depends only on (seed, r).
  internal::SimRandom r(rng_ + row * 0x9e3779b97f4a7c15ull);
  const double x = r.Uniform() * cumulative_.back();
  for (size_t i = 0; i < cumulative_.size(); ++i) {
    if (x < cumulative_[i]) return m_.users[i];
  }
  return m_.users.back();
}

uint32_t TraceRowMapper::ClassFor(int32_t prompt, int32_t output) const {
  for (const ClassRule& rule : m_.class_rules) {
    if (prompt <= rule.max_prompt_tokens && output <= rule.max_output_tokens) {
      return rule.work_class;
    }
  }
  return m_.default_class;
}

bool TraceRowMapper::InWindow(absl::Duration offset) const {
  return offset >= m_.skip && offset - m_.skip < m_.duration;
}

absl::Duration TraceRowMapper::ArrivalFor(absl::Duration offset) const {
  return (offset - m_.skip) / m_.time_scale;
}

}  // namespace hearth

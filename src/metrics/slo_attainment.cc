#include "metrics/slo_attainment.h"

#include <algorithm>

namespace hearth::metrics_internal {
namespace {

Verdict Within(absl::Duration value, absl::Duration target) {
  return value <= target ? Verdict::kMet : Verdict::kMissed;
}

}  // namespace

absl::Duration EndedRequest::Ttft() const {
  if (has_first_token()) return first_token - arrival;
  return std::max(end, arrival) - arrival;
}

absl::Duration EndedRequest::Tpot() const {
  if (!has_first_token() || produced < 2) return absl::ZeroDuration();
  return (last_token - first_token) / (produced - 1);
}

Verdict JudgeTtft(const EndedRequest& r, absl::Duration target) {
  if (target == absl::InfiniteDuration()) return Verdict::kNotJudged;
  if (r.phase == RequestPhase::kFinished || r.has_first_token()) {
    return Within(r.Ttft(), target);
  }
  if (r.phase == RequestPhase::kCancelled) {
    return r.Ttft() > target ? Verdict::kMissed : Verdict::kNotJudged;
  }
  return Verdict::kMissed;
}

Verdict JudgeTpot(const EndedRequest& r, absl::Duration target) {
  if (target == absl::InfiniteDuration()) return Verdict::kNotJudged;
  switch (r.phase) {
    case RequestPhase::kFinished:
      return Within(r.Tpot(), target);
    case RequestPhase::kCancelled:
      return r.produced >= 2 ? Within(r.Tpot(), target) : Verdict::kNotJudged;
    default:
      return Verdict::kMissed;
  }
}

}  // namespace hearth::metrics_internal

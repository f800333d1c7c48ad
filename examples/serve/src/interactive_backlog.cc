#include "interactive_backlog.h"

#include <algorithm>

namespace hearth::serve {
namespace {

// InteractiveDemand's bounds (ValidateInteractiveDemand).
constexpr double kMinSlack = -1e6;
constexpr int64_t kMaxBacklog = int64_t{1} << 30;

}  // namespace

InteractiveBacklog::InteractiveBacklog(std::vector<absl::Duration> ttft_targets,
                                       std::vector<bool> interactive) {
  classes_.resize(std::max(ttft_targets.size(), interactive.size()));
  for (size_t c = 0; c < classes_.size(); ++c) {
    classes_[c].ttft_target =
        c < ttft_targets.size() ? ttft_targets[c] : absl::InfiniteDuration();
    classes_[c].interactive = c < interactive.size() && interactive[c];
  }
}

void InteractiveBacklog::Waiting(RequestId id, WorkClassId work_class, absl::Time submitted) {
  const size_t c = work_class.value();
  if (c >= classes_.size() || !classes_[c].interactive) return;
  if (!held_.emplace(id, std::make_pair(c, submitted)).second) return;
  classes_[c].waiting.insert({submitted, id});
}

void InteractiveBacklog::Answered(RequestId id) {
  auto it = held_.find(id);
  if (it == held_.end()) return;
  const auto [c, submitted] = it->second;
  classes_[c].waiting.erase({submitted, id});
  held_.erase(it);
}

InteractiveDemand InteractiveBacklog::Demand(absl::Time now) const {
  InteractiveDemand d;
  d.interactive_backlog = std::min<int64_t>(size(), kMaxBacklog);
  for (const Class& c : classes_) {
    if (c.waiting.empty()) continue;
    const absl::Duration target = c.ttft_target;
    if (target <= absl::ZeroDuration() || target == absl::InfiniteDuration()) continue;
    const absl::Duration waited = std::max(absl::ZeroDuration(), now - c.waiting.begin()->first);
    const double slack = 1.0 - absl::FDivDuration(waited, target);
    d.slo_slack = std::min(d.slo_slack, std::max(slack, kMinSlack));
  }
  return d;
}

}  // namespace hearth::serve

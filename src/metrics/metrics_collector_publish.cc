// MetricsCollector::Publish() and PublishedReport(): the report other
// threads may read while the engine thread keeps aggregating.

#include <memory>
#include <mutex>
#include <utility>

#include "hearth/metrics/metrics_collector.h"

namespace hearth {

void MetricsCollector::MaybePublish(absl::Time end) {
  // One comparison on the steps that do not publish: no lock, no allocation.
  if (end < next_publish_) return;
  Publish();
  next_publish_ = end + options_.publish_interval;
}

void MetricsCollector::Publish() {
  // Built outside the lock, so readers never wait for Report().
  std::shared_ptr<const MetricsReport> report =
      std::make_shared<const MetricsReport>(Report());
  {
    std::lock_guard<std::mutex> lock(published_mu_);
    published_.swap(report);
  }
  // `report` now holds the previous publication; when no reader still holds
  // it, it is freed here, outside the lock.
}

std::shared_ptr<const MetricsReport> MetricsCollector::PublishedReport() const {
  std::lock_guard<std::mutex> lock(published_mu_);
  return published_;
}

}  // namespace hearth

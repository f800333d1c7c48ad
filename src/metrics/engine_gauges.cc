#include "hearth/metrics/engine_gauges.h"

#include <algorithm>

namespace hearth {

double EngineGauges::KvUsage() const {
  if (device_blocks_usable <= 0) return 1.0;
  const double used = static_cast<double>(device_blocks_used) / device_blocks_usable;
  return std::clamp(used, 0.0, 1.0);
}

EngineGauges EngineGaugesFrom(const SchedulerStats& stats) {
  EngineGauges g;
  g.queued = stats.queued;
  g.waiting = stats.waiting;
  g.preparing = stats.preparing;
  g.held = stats.held;
  g.running = stats.running;
  g.swapped = stats.swapped;
  g.device_blocks_capacity = stats.device_blocks;
  g.device_blocks_used =
      stats.device_blocks - stats.free_device_blocks - stats.cached_device_blocks;
  g.device_blocks_cached = stats.cached_device_blocks;
  g.device_blocks_usable = stats.kv_block_limit;
  g.host_blocks_capacity = stats.host_blocks;
  g.host_blocks_used = stats.host_blocks - stats.free_host_blocks;
  g.resident_weight_bytes = stats.resident_weight_bytes;
  return g;
}

EngineGauges EngineGaugesFrom(const Scheduler& scheduler) {
  return EngineGaugesFrom(scheduler.stats());
}

}  // namespace hearth

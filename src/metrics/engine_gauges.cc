#include "hearth/metrics/engine_gauges.h"

#include <algorithm>

namespace hearth {

double EngineGauges::KvUsage() const {
  if (device_blocks_usable <= 0) return 1.0;
  const double used = static_cast<double>(device_blocks_used) / device_blocks_usable;
  return std::clamp(used, 0.0, 1.0);
}

EngineGauges EngineGaugesFrom(const SchedulerStats& stats,
                              const BlockAllocator& blocks) {
  EngineGauges g;
  g.queued = stats.queued;
  g.waiting = stats.waiting;
  g.preparing = stats.preparing;
  g.running = stats.running;
  g.swapped = stats.swapped;
  g.device_blocks_capacity = blocks.num_device_blocks();
  g.device_blocks_used = blocks.num_owned();
  g.device_blocks_cached = blocks.num_cached();
  g.device_blocks_usable = stats.kv_block_limit;
  g.host_blocks_capacity = blocks.num_host_blocks();
  g.host_blocks_used = blocks.num_host_blocks() - blocks.num_free_host();
  g.resident_weight_bytes = stats.resident_weight_bytes;
  return g;
}

EngineGauges EngineGaugesFrom(const Scheduler& scheduler) {
  return EngineGaugesFrom(scheduler.stats(), scheduler.block_allocator());
}

}  // namespace hearth

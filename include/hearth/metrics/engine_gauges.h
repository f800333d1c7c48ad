// File: hearth/metrics/engine_gauges.h
//
// `EngineGauges` is a value snapshot of the scheduler's current state (queue
// depths, KV blocks, resident weights) for the gauges of a Prometheus scrape
// (see prometheus.h). A MetricsReport holds what happened; this holds what is
// now. The engine thread takes it, because Scheduler::stats() belongs to that
// thread (or any thread from Scheduler::PublishedStats()); the snapshot itself
// is a plain value that may then be handed to whichever thread serves
// /metrics.
//
// Units: requests and blocks are counts; bytes are bytes; KvUsage() is a
// fraction in [0, 1].
//
// Example:
//   hearth::EngineGauges gauges = hearth::EngineGaugesFrom(scheduler);
//   double kv = gauges.KvUsage();   // 0.73: 73% of the usable device blocks held

#ifndef HEARTH_METRICS_ENGINE_GAUGES_H_
#define HEARTH_METRICS_ENGINE_GAUGES_H_

#include <cstdint>

#include "hearth/scheduler/scheduler.h"

namespace hearth {

struct EngineGauges {
  // Requests by phase (SchedulerStats' definitions): queued = submitted, not
  // yet taken in by a Plan; waiting = taken in, not running (new or preempted
  // by recompute); preparing = waiting for their model to load; held =
  // submitted with RequestSpec::hold, not released yet; running = holding
  // KV and scheduled each step; swapped = preempted to host blocks.
  int32_t queued = 0;
  int32_t waiting = 0;
  int32_t preparing = 0;
  int32_t held = 0;
  int32_t running = 0;
  int32_t swapped = 0;

  // Device KV blocks: used = referenced by a sequence (owned); cached = held
  // only by the prefix cache (reusable, evicted on demand, so not "used");
  // usable = how many may be held at once (the whole pool, or with model
  // residency what the resident weights leave); capacity = the pool.
  int32_t device_blocks_used = 0;
  int32_t device_blocks_cached = 0;
  int32_t device_blocks_usable = 0;
  int32_t device_blocks_capacity = 0;
  // Host (swap) blocks in use and in the pool; 0 and 0 without swap.
  int32_t host_blocks_used = 0;
  int32_t host_blocks_capacity = 0;

  int64_t resident_weight_bytes = 0;

  // EngineGauges::KvUsage()
  //
  // device_blocks_used / device_blocks_usable, in [0, 1]: what vLLM reports
  // as kv_cache_usage_perc (cached but unreferenced blocks count as free, as
  // there). 1 when nothing is usable, so a router sends nothing here.
  double KvUsage() const;
};

// From a stats snapshot (SchedulerStats carries the block counts too).
EngineGauges EngineGaugesFrom(const SchedulerStats& stats);
// Shorthand for EngineGaugesFrom(scheduler.stats()).
// REQUIRES: called on the engine thread (between Plan/Complete calls).
EngineGauges EngineGaugesFrom(const Scheduler& scheduler);

}  // namespace hearth

#endif  // HEARTH_METRICS_ENGINE_GAUGES_H_

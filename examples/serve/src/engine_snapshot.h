// File: examples/serve/src/engine_snapshot.h
//
// `EngineSnapshot` is what the engine thread publishes a few times a second
// for /metrics, the status endpoint and the dashboard: the metrics report
// (what happened), the engine gauges (what is now), and live per-class and
// per-member figures the scheduler's counters do not break down (queue
// depth and oldest wait per class, who holds the running sequences and KV).
// HTTP threads read an immutable copy and never touch the scheduler.
//
// Thread-safety: immutable once published.

#ifndef HEARTH_SERVE_ENGINE_SNAPSHOT_H_
#define HEARTH_SERVE_ENGINE_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hearth/metrics/engine_gauges.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/metrics/metrics_report.h"

namespace hearth::serve {

struct ClassLive {
  std::string name;
  int32_t priority = 0;
  int32_t max_running = 0;
  // Submitted, not yet running (queued, waiting, or preempted).
  int32_t waiting = 0;
  int32_t running = 0;
  // Longest time a waiting request of the class has waited so far.
  double oldest_wait_s = 0;
  SloTarget slo;
};

struct MemberLive {
  std::string name;
  double weight = 1;
  int32_t waiting = 0;
  int32_t running = 0;
  int32_t kv_blocks = 0;
};

struct RunningSequence {
  uint64_t id = 0;
  std::string member;
  std::string work_class;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  int32_t kv_blocks = 0;
};

struct EngineSnapshot {
  absl::Time taken = absl::InfinitePast();
  std::string model;
  std::string policy;
  int32_t block_size = 0;
  int32_t context_length = 0;
  bool draining = false;
  MetricsReport report;
  EngineGauges gauges;
  std::vector<ClassLive> classes;
  std::vector<MemberLive> members;
  // At most kMaxListedSequences, oldest first.
  std::vector<RunningSequence> running;
  uint64_t disconnect_cancels = 0;
  // llama.cpp's side of swap and prefix caching (LlamaExecutorStats), so
  // that an operator sees whether preemption saved or recomputed.
  uint64_t swapped_out = 0;
  uint64_t swapped_in = 0;
  int32_t kv_streams = 1;
};

inline constexpr size_t kMaxListedSequences = 64;

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_ENGINE_SNAPSHOT_H_

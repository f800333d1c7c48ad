// File: hearth/scheduler/scheduler_options.h
//
// Everything a Scheduler is configured with, fixed at Scheduler::Create().
// Create() validates all of it and says which field is wrong and what is
// allowed. Fields are grouped as in LevelDB's options.h: what changes
// behaviour, then what changes only performance.

#ifndef HEARTH_SCHEDULER_SCHEDULER_OPTIONS_H_
#define HEARTH_SCHEDULER_SCHEDULER_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hearth/policy/policy.h"
#include "hearth/request/request_state.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth {

class MetricsSink;

struct ModelConfig {
  // Unique, non-empty.
  std::string name = "default";
  // Maximum sequence length (prompt + generated tokens). Must be >= 2.
  int32_t context_length = 8192;
  // When > 0, submitted token ids must lie in [0, vocab_size).
  int32_t vocab_size = 0;
  // KV bytes per token: layers * kv_heads * head_dim * 2 * dtype bytes.
  // Informational for the core; used to size caches (see KvBlocksForMemory).
  int64_t kv_bytes_per_token = 0;
};

struct UserConfig {
  // Unique, non-empty.
  std::string name = "default";
  // Share weight for fairness policies. Must be > 0.
  double weight = 1.0;
};

struct WorkClassConfig {
  // Unique, non-empty.
  std::string name = "default";
  // Higher is more urgent, for priority-aware policies.
  int32_t priority = 0;
};

struct KvCacheConfig {
  // Tokens per block. Must be in [1, 4096]; 16 is what most engines use.
  int32_t block_size = 16;
  // Device blocks. Must be >= 1.
  int32_t num_device_blocks = 4096;
  // Host blocks for swap preemption; 0 disables swap (recompute only).
  int32_t num_host_blocks = 0;
  // Blocks kept free at admission so running sequences can grow without
  // immediate preemption. Admission needs free blocks >= need + watermark.
  int32_t watermark_blocks = 0;
  // Reuse KV of identical full prompt blocks (needs token ids in requests).
  bool enable_prefix_caching = true;
};

// Device blocks that fit `kv_memory_bytes` for a model with
// `kv_bytes_per_token` and the given block size (floor; >= 0).
int32_t KvBlocksForMemory(int64_t kv_memory_bytes, int64_t kv_bytes_per_token,
                          int32_t block_size);

struct SchedulerOptions {
  // ---- Behaviour.

  // Registries. Requests name entries by index (ModelId, UserId, WorkClassId);
  // each must be non-empty.
  std::vector<ModelConfig> models = {ModelConfig{}};
  std::vector<UserConfig> users = {UserConfig{}};
  std::vector<WorkClassConfig> work_classes = {WorkClassConfig{}};

  KvCacheConfig kv;

  // Orders admissions and preemption victims. Null means FIFO.
  PolicyFactory policy_factory;

  // How running sequences are preempted when decode growth cannot be met.
  // kSwap needs kv.num_host_blocks > 0 and falls back to recompute when the
  // host tier is full.
  PreemptionMode preemption_mode = PreemptionMode::kRecompute;

  // Requests accepted but not yet terminal, across all users. Submit beyond it
  // returns ResourceExhausted. Must be >= 1.
  int32_t max_pending_requests = 1 << 20;

  // Called on the engine thread, inside Plan/Complete, once per request when it
  // reaches a terminal phase. Must not call back into the scheduler. When set,
  // results are not also queued for DrainResults().
  std::function<void(const RequestResult&)> on_result;

  // Not owned; may be null. Must outlive the scheduler.
  MetricsSink* metrics_sink = nullptr;

  // ---- Performance (and latency/throughput trade-offs).

  // Token budget of one step: decodes plus prefill chunks. Must be >= 1.
  int32_t max_batched_tokens = 2048;
  // Sequences in one step (running set size). Must be in [1, max_batched_tokens].
  int32_t max_running = 256;
  // Largest prefill chunk one sequence gets per step; 0 means
  // max_batched_tokens. Smaller chunks interleave long prompts with others.
  int32_t max_prefill_chunk_tokens = 0;
  // Candidates the policy may offer that the scheduler declines in one step
  // before admission stops for the step (bounds per-step work).
  int32_t max_admission_declines = 32;
};

}  // namespace hearth

#endif  // HEARTH_SCHEDULER_SCHEDULER_OPTIONS_H_

// File: hearth/exec/executor_kv_config.h
//
// `ExecutorKvConfig` is the geometry of an executor's paged KV pool: block
// size, device and host blocks, and the longest sequence it computes. It must
// match the scheduler's KvCacheConfig. Every executor checks it with
// ValidateExecutorKvConfig() before allocating, so the bounds (and their
// messages) are the same whichever executor a host picks.
//
// Example:
//   const hearth::KvCacheConfig& planned = scheduler.options().kv;
//   hearth::ExecutorKvConfig kv;
//   kv.block_size = planned.block_size;
//   kv.num_device_blocks = planned.num_device_blocks;
//   kv.num_host_blocks = planned.num_host_blocks;
//   if (absl::Status s = hearth::ValidateExecutorKvConfig(kv); !s.ok()) return s;

#ifndef HEARTH_EXEC_EXECUTOR_KV_CONFIG_H_
#define HEARTH_EXEC_EXECUTOR_KV_CONFIG_H_

#include <cstdint>

#include "absl/status/status.h"

namespace hearth {

struct ExecutorKvConfig {
  // Upper bounds of the fields below; they keep every block index and pool
  // offset an executor computes within int64 and its tables within int32.
  static constexpr int32_t kMaxBlockSize = 4096;
  static constexpr int32_t kMaxBlocks = 1 << 30;  // per tier
  static constexpr int32_t kMaxPositions = 1 << 24;

  // Tokens per block. Must be in [1, kMaxBlockSize].
  int32_t block_size = 16;
  // Device-tier blocks. Must be in [1, kMaxBlocks = 2^30].
  int32_t num_device_blocks = 256;
  // Host-tier blocks (swap targets). Must be in [0, kMaxBlocks = 2^30].
  int32_t num_host_blocks = 0;
  // Longest sequence (positions) the executor computes. Must be in
  // [1, kMaxPositions = 2^24].
  int32_t max_positions = 8192;
};

// ValidateExecutorKvConfig()
//
// InvalidArgument naming the first field outside its bounds, with its value
// and the allowed range ("kv.num_device_blocks = 0 is invalid: must be in
// [1, 2^30]"); OK otherwise.
absl::Status ValidateExecutorKvConfig(const ExecutorKvConfig& kv);

}  // namespace hearth

#endif  // HEARTH_EXEC_EXECUTOR_KV_CONFIG_H_

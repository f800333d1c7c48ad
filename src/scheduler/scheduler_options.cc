// File: src/scheduler/scheduler_options.cc
//
// What hearth/scheduler/scheduler_options.h defines beside the options
// themselves: the memory-to-blocks helper and the household's work classes.
// Validation of the options lives in options_validation.cc.

#include "hearth/scheduler/scheduler_options.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace hearth {

int32_t KvBlocksForMemory(int64_t kv_memory_bytes, int64_t kv_bytes_per_token,
                          int32_t block_size) {
  if (kv_memory_bytes <= 0 || kv_bytes_per_token <= 0 || block_size <= 0) return 0;
  // A block larger than any memory: checked before the product can wrap.
  if (kv_bytes_per_token > kv_memory_bytes / block_size) return 0;
  const int64_t blocks = kv_memory_bytes / (kv_bytes_per_token * block_size);
  return static_cast<int32_t>(std::min<int64_t>(blocks, int64_t{1} << 24));
}

std::vector<WorkClassConfig> HouseholdWorkClasses() {
  std::vector<WorkClassConfig> classes(5);
  // Voice: a person is waiting with the microphone open; short and urgent,
  // useless after a few seconds.
  classes[0] = {.name = "voice", .priority = 4, .max_running = 8, .kv_block_budget = 0,
                .borrow = true, .queue_timeout = absl::Seconds(10), .max_retries = 1,
                .ttft_slo = absl::Milliseconds(500)};
  classes[1] = {.name = "chat", .priority = 3, .max_retries = 1, .ttft_slo = absl::Seconds(2)};
  // Agents fire many calls; a cap keeps one busy agent from filling the batch.
  classes[2] = {.name = "agent", .priority = 2, .max_running = 32, .max_retries = 2,
                .ttft_slo = absl::Seconds(5)};
  classes[3] = {.name = "embedding", .priority = 1, .max_running = 16, .max_retries = 2};
  classes[4] = {.name = "maintenance", .priority = 0, .max_running = 4, .max_retries = 3};
  return classes;
}

}  // namespace hearth

// The bounds every executor's KV geometry is checked against (see
// executor_kv_config.h).

#include "hearth/exec/executor_kv_config.h"

#include "absl/strings/str_format.h"

namespace hearth {
namespace {

// One bounded field of ExecutorKvConfig.
struct KvBound {
  const char* name;
  int32_t ExecutorKvConfig::*field;
  int32_t min;
  int32_t max;
  const char* max_text;
};

using Kv = ExecutorKvConfig;
constexpr KvBound kKvBounds[] = {
    {"block_size", &Kv::block_size, 1, Kv::kMaxBlockSize, "4096"},
    {"num_device_blocks", &Kv::num_device_blocks, 1, Kv::kMaxBlocks, "2^30"},
    {"num_host_blocks", &Kv::num_host_blocks, 0, Kv::kMaxBlocks, "2^30"},
    {"max_positions", &Kv::max_positions, 1, Kv::kMaxPositions, "2^24"},
};

}  // namespace

absl::Status ValidateExecutorKvConfig(const ExecutorKvConfig& kv) {
  for (const KvBound& b : kKvBounds) {
    const int32_t value = kv.*b.field;
    if (value < b.min || value > b.max) {
      return absl::InvalidArgumentError(
          absl::StrFormat("kv.%s = %d is invalid: must be in [%d, %s]", b.name,
                          value, b.min, b.max_text));
    }
  }
  return absl::OkStatus();
}

}  // namespace hearth

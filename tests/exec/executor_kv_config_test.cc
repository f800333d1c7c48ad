// The KV-geometry bounds every executor checks before allocating.

#include "hearth/exec/executor_kv_config.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace hearth {
namespace {

TEST_CASE("Executor KV geometry is bounded, 2^30 blocks at most", "[exec]") {
  struct Case {
    const char* field;
    int32_t ExecutorKvConfig::*member;
    int32_t value;
    bool ok;
  };
  constexpr int32_t k2p30 = 1 << 30;
  const std::vector<Case> cases = {
      {"block_size", &ExecutorKvConfig::block_size, 0, false},
      {"block_size", &ExecutorKvConfig::block_size, 1, true},
      {"block_size", &ExecutorKvConfig::block_size, 4096, true},
      {"block_size", &ExecutorKvConfig::block_size, 4097, false},
      {"num_device_blocks", &ExecutorKvConfig::num_device_blocks, 0, false},
      {"num_device_blocks", &ExecutorKvConfig::num_device_blocks, 1, true},
      {"num_device_blocks", &ExecutorKvConfig::num_device_blocks, k2p30, true},
      {"num_device_blocks", &ExecutorKvConfig::num_device_blocks, k2p30 + 1, false},
      {"num_host_blocks", &ExecutorKvConfig::num_host_blocks, -1, false},
      {"num_host_blocks", &ExecutorKvConfig::num_host_blocks, 0, true},
      {"num_host_blocks", &ExecutorKvConfig::num_host_blocks, k2p30, true},
      {"num_host_blocks", &ExecutorKvConfig::num_host_blocks, k2p30 + 1, false},
      {"max_positions", &ExecutorKvConfig::max_positions, 0, false},
      {"max_positions", &ExecutorKvConfig::max_positions, 1 << 24, true},
      {"max_positions", &ExecutorKvConfig::max_positions, (1 << 24) + 1, false},
  };
  for (const Case& c : cases) {
    INFO(c.field << " = " << c.value);
    ExecutorKvConfig kv;
    kv.*c.member = c.value;
    absl::Status s = ValidateExecutorKvConfig(kv);
    CHECK(s.ok() == c.ok);
    if (!c.ok) {
      CHECK(absl::IsInvalidArgument(s));
      CHECK_THAT(std::string(s.message()),
                 Catch::StartsWith(std::string("kv.") + c.field + " = "));
    }
  }
  ExecutorKvConfig kv;
  kv.num_device_blocks = k2p30 + 1;
  CHECK(ValidateExecutorKvConfig(kv).message() ==
        "kv.num_device_blocks = 1073741825 is invalid: must be in [1, 2^30]");
}

}  // namespace
}  // namespace hearth

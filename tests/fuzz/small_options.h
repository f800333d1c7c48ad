// SchedulerOptions for scheduler_ops_fuzzer: a small house (a few users,
// classes and models, a KV cache of tens of blocks) so that a short input
// reaches full caches, preemption, swap and retries. Field values stay in
// their valid ranges except for rare edges; options_fuzzer covers the rest.

#ifndef HEARTH_TESTS_FUZZ_SMALL_OPTIONS_H_
#define HEARTH_TESTS_FUZZ_SMALL_OPTIONS_H_

#include <fuzzer/FuzzedDataProvider.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/scheduler/scheduler_options.h"
#include "tests/fuzz/hostile_values.h"

namespace hearth::fuzz {

inline ModelConfig SmallModel(FuzzedDataProvider& in, int index) {
  ModelConfig m;
  m.name = absl::StrCat("m", index);
  m.context_length = in.ConsumeBool() ? 256 : in.ConsumeIntegralInRange<int32_t>(2, 1 << 16);
  m.vocab_size = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int32_t>(1, 64);
  m.kv_bytes_per_token = in.ConsumeIntegralInRange<int64_t>(0, 64);
  m.weights_bytes = in.ConsumeIntegralInRange<int64_t>(0, 1 << 16);
  m.preload = in.ConsumeBool();
  m.keep_alive = in.ConsumeBool() ? absl::InfiniteDuration()
                                  : absl::Milliseconds(in.ConsumeIntegralInRange(0, 500));
  return m;
}

inline UserConfig SmallUser(FuzzedDataProvider& in, int index) {
  UserConfig u;
  u.name = absl::StrCat("u", index);
  u.weight = in.ConsumeFloatingPointInRange<double>(0.01, 100);
  u.max_queued_requests = in.ConsumeIntegralInRange<int32_t>(0, 8);
  u.token_quota = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int64_t>(1, 4096);
  u.quota_window = absl::Milliseconds(in.ConsumeIntegralInRange<int64_t>(1, 100'000));
  return u;
}

inline WorkClassConfig SmallClass(FuzzedDataProvider& in, int index, int32_t device_blocks) {
  WorkClassConfig c;
  c.name = absl::StrCat("c", index);
  c.priority = SmallOrEdge<int32_t>(in, -3, 3);
  c.max_running = in.ConsumeIntegralInRange<int32_t>(0, 4);
  c.kv_block_budget = in.ConsumeIntegralInRange<int32_t>(0, device_blocks);
  c.borrow = in.ConsumeBool();
  c.queue_timeout = in.ConsumeBool() ? absl::InfiniteDuration()
                                     : absl::Milliseconds(in.ConsumeIntegralInRange(1, 2000));
  c.max_retries = in.ConsumeIntegralInRange<int32_t>(0, 3);
  c.weight = in.ConsumeFloatingPointInRange<double>(0.01, 100);
  return c;
}

// One of KnownPolicyNames(), or empty for the default (FIFO).
inline std::string PickPolicy(FuzzedDataProvider& in) {
  const std::vector<std::string_view> names = KnownPolicyNames();
  const size_t pick = in.ConsumeIntegralInRange<size_t>(0, names.size());
  return pick == names.size() ? std::string() : std::string(names[pick]);
}

inline SchedulerOptions SmallOptions(FuzzedDataProvider& in) {
  SchedulerOptions o;
  o.models.clear();
  o.users.clear();
  o.work_classes.clear();
  const int models = in.ConsumeIntegralInRange(1, 3);
  for (int i = 0; i < models; ++i) o.models.push_back(SmallModel(in, i));
  const int users = in.ConsumeIntegralInRange(1, 3);
  for (int i = 0; i < users; ++i) o.users.push_back(SmallUser(in, i));
  o.kv.block_size = in.PickValueInArray({1, 2, 4, 16});
  o.kv.num_device_blocks = in.ConsumeIntegralInRange<int32_t>(1, 64);
  o.kv.num_host_blocks = in.ConsumeIntegralInRange<int32_t>(0, 32);
  o.kv.watermark_blocks = in.ConsumeIntegralInRange<int32_t>(0, 4);
  o.kv.enable_prefix_caching = in.ConsumeBool();
  const int classes = in.ConsumeIntegralInRange(1, 3);
  for (int i = 0; i < classes; ++i) {
    o.work_classes.push_back(SmallClass(in, i, o.kv.num_device_blocks));
  }
  if (in.ConsumeBool()) {
    // Room for a few small models' weights plus part of the KV cache.
    o.residency.device_memory_bytes = in.ConsumeIntegralInRange<int64_t>(1, 1 << 18);
    o.residency.max_concurrent_loads = in.ConsumeIntegralInRange<int32_t>(1, 3);
  }
  o.preemption_mode = in.ConsumeBool() ? PreemptionMode::kSwap : PreemptionMode::kRecompute;
  o.max_pending_requests = in.ConsumeIntegralInRange<int32_t>(1, 64);
  o.max_pending_bytes = in.ConsumeBool() ? o.max_pending_bytes
                                         : in.ConsumeIntegralInRange<int64_t>(1, 4096);
  o.reserved_pending_share = in.ConsumeFloatingPointInRange<double>(0, 1);
  o.max_intake_per_plan = in.ConsumeIntegralInRange<int32_t>(1, 8);
  o.max_label_bytes = in.ConsumeIntegralInRange<int32_t>(0, 64);
  o.max_arrival_lead = absl::Milliseconds(in.ConsumeIntegralInRange(0, 1000));
  o.workflow_retention = absl::Milliseconds(in.ConsumeIntegralInRange(0, 1000));
  o.max_batched_tokens = in.ConsumeIntegralInRange<int32_t>(1, 512);
  o.max_running = in.ConsumeIntegralInRange<int32_t>(1, std::min(o.max_batched_tokens, 32));
  o.max_prefill_chunk_tokens = in.ConsumeIntegralInRange<int32_t>(0, 64);
  o.max_admission_declines = in.ConsumeIntegralInRange<int32_t>(1, 8);
  return o;
}

// The policy factory for `name` (empty: leave the default). MLFQ's levels
// and the household's request level come from the input too.
inline absl::Status SetPolicy(FuzzedDataProvider& in, const std::string& name,
                              SchedulerOptions& o) {
  if (name.empty()) return absl::OkStatus();
  PolicyConfig config;
  config.household_request_level = in.ConsumeBool() ? RequestLevel::kMlfq : RequestLevel::kFifo;
  config.mlfq.num_levels = in.ConsumeIntegralInRange<int32_t>(1, 4);
  config.mlfq.base_quantum = in.ConsumeFloatingPointInRange<double>(1, 64);
  config.workflow_head_start = absl::Milliseconds(in.ConsumeIntegralInRange(0, 1000));
  absl::StatusOr<PolicyFactory> factory = MakePolicyFactory(name, config);
  if (!factory.ok()) return factory.status();
  o.policy_factory = *std::move(factory);
  return absl::OkStatus();
}

}  // namespace hearth::fuzz

#endif  // HEARTH_TESTS_FUZZ_SMALL_OPTIONS_H_

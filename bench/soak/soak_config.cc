#include "bench/soak/soak_config.h"

#include <string>
#include <utility>
#include <vector>

#include "hearth/policy/policy_registry.h"
#include "hearth/policy/policy_tree.h"

namespace hearth::bench {

namespace {

constexpr char kClassShares[] = "class-shares";

absl::StatusOr<PolicyFactory> SoakPolicyFactory(const std::string& name) {
  if (name == kClassShares) {
    PolicyTreeConfig tree;
    tree.name = kClassShares;
    tree.class_level = ClassLevel::kWeightedShares;
    tree.user_level = UserLevel::kVtc;
    tree.request_level = RequestLevel::kFifo;
    return PolicyTreeFactory(tree);
  }
  // User weights and class priorities reach the policy from the options.
  return MakePolicyFactory(name, PolicyConfig{});
}

}  // namespace

std::vector<std::string> SoakPolicyNames() {
  std::vector<std::string> names;
  for (std::string_view name : KnownPolicyNames()) names.emplace_back(name);
  names.emplace_back(kClassShares);
  return names;
}

std::string ModeName(PreemptionMode mode) {
  return mode == PreemptionMode::kSwap ? "swap" : "recompute";
}

absl::StatusOr<SchedulerOptions> MakeSoakSchedulerOptions(const SoakConfig& config) {
  absl::StatusOr<PolicyFactory> factory = SoakPolicyFactory(config.policy);
  if (!factory.ok()) return factory.status();
  SchedulerOptions o;
  o.models[0].name = "soak";
  o.models[0].context_length = 4096;
  // A vocabulary makes Complete check sampled token ids, so out-of-range
  // tokens are one of the corruptions it must reject.
  o.models[0].vocab_size = 32000;
  // Unequal weights, so fairness policies have something to weigh.
  o.users = {{.name = "alice", .weight = 1.0},
             {.name = "bob", .weight = 1.0},
             {.name = "carol", .weight = 2.0},
             {.name = "dave", .weight = 0.5}};
  o.work_classes = HouseholdWorkClasses();
  o.kv.block_size = 16;
  o.kv.num_device_blocks = config.device_blocks;
  o.kv.watermark_blocks = 8;
  o.kv.num_host_blocks = config.mode == PreemptionMode::kSwap ? config.host_blocks : 0;
  o.preemption_mode = config.mode;
  o.max_pending_requests = config.max_pending;
  o.max_running = config.max_running;
  o.max_batched_tokens = 2048;
  o.max_prefill_chunk_tokens = 512;
  o.policy_factory = *std::move(factory);
  return o;
}

}  // namespace hearth::bench

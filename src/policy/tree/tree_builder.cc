// File: src/policy/tree/tree_builder.cc

#include "policy/tree/tree_builder.h"

#include <algorithm>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "hearth/scheduler/scheduler_options.h"
#include "policy/nodes/arrival_order_node.h"
#include "policy/nodes/fair_share_node.h"
#include "policy/nodes/mlfq_node.h"
#include "policy/nodes/priority_node.h"
#include "policy/tree/tree_policy.h"

namespace hearth::policy_internal {
namespace {

// Whether a preempted request's KV goes to the host tier instead of being
// recomputed (the core still recomputes when the tier is full).
bool SwapsPreempted(const SchedulerOptions& options) {
  return options.preemption_mode == PreemptionMode::kSwap && options.kv.num_host_blocks > 0;
}

NodeFactory RequestLevelFactory(const PolicyTreeConfig& config,
                                const SchedulerOptions& options) {
  if (config.request_level == RequestLevel::kMlfq) {
    MlfqOptions mlfq = config.mlfq;
    if (!SwapsPreempted(options) && !mlfq.time_slice_with_recompute) mlfq.max_preemptions_per_step = 0;
    return MlfqLeafFactory(mlfq);
  }
  return [] { return NewArrivalOrderNode(); };
}

// Explicit weights in the policy's configuration win; without them each
// user or class weighs what the scheduler's options say (UserConfig::weight,
// WorkClassConfig::weight).
template <typename Config>
std::vector<double> WeightsFor(const std::vector<double>& explicit_weights,
                               const std::vector<Config>& configs) {
  if (!explicit_weights.empty()) return explicit_weights;
  std::vector<double> weights;
  weights.reserve(configs.size());
  for (const Config& config : configs) weights.push_back(config.weight);
  return weights;
}

// A fair-share level keyed by `key`, charging as `vtc` says.
FairShareParams ShareParams(const VtcOptions& vtc, ShareKey key,
                            std::vector<double> weights) {
  FairShareParams params;
  params.key = key;
  params.prompt_token_weight = vtc.prompt_token_weight;
  params.decode_token_weight = vtc.decode_token_weight;
  params.weights = std::move(weights);
  return params;
}

NodeFactory UserLevelFactory(const PolicyTreeConfig& config,
                             const SchedulerOptions& options) {
  NodeFactory leaf = RequestLevelFactory(config, options);
  if (config.user_level == UserLevel::kNone) return leaf;
  FairShareParams params = ShareParams(config.vtc, ShareKey::kUser,
                                       WeightsFor(config.vtc.user_weights, options.users));
  params.preempt_for_admission = config.vtc.preempt_for_admission;
  params.admission_preemption_gap = config.vtc.admission_preemption_gap;
  return [params, leaf] { return NewFairShareNode(params, leaf); };
}

std::vector<int64_t> ClassPriorities(const SchedulerOptions& options) {
  std::vector<int64_t> priorities;
  priorities.reserve(options.work_classes.size());
  for (const WorkClassConfig& c : options.work_classes) {
    priorities.push_back(c.priority);
  }
  return priorities;
}

// One target of every work class (e.g. &WorkClassConfig::ttft_slo), by
// WorkClassId::value().
std::vector<absl::Duration> ClassTargets(const SchedulerOptions& options,
                                         absl::Duration WorkClassConfig::*target) {
  std::vector<absl::Duration> targets;
  targets.reserve(options.work_classes.size());
  for (const WorkClassConfig& c : options.work_classes) targets.push_back(c.*target);
  return targets;
}

std::optional<MemberGuard> MemberGuardFor(const PolicyTreeConfig& config,
                                          const SchedulerOptions& options) {
  if (!config.member_guard) return std::nullopt;
  MemberGuard guard;
  guard.ledger.prompt_token_weight = config.vtc.prompt_token_weight;
  guard.ledger.decode_token_weight = config.vtc.decode_token_weight;
  guard.ledger.weights = WeightsFor(config.vtc.user_weights, options.users);
  guard.ledger.max_running = options.max_running;
  guard.ledger.kv_tokens = int64_t{options.kv.num_device_blocks} * options.kv.block_size;
  guard.gap = config.member_guard_gap;
  return guard;
}

std::unique_ptr<Node> BuildRoot(const PolicyTreeConfig& config,
                                const SchedulerOptions& options) {
  NodeFactory below = UserLevelFactory(config, options);
  switch (config.class_level) {
    case ClassLevel::kNone:
      return below();
    case ClassLevel::kPriority:
      return NewPriorityNode(config.priority, ClassPriorities(options), below);
    case ClassLevel::kSlo:
      return NewSloClassNode(config.priority, ClassPriorities(options),
                             ClassTargets(options, &WorkClassConfig::ttft_slo),
                             ClassTargets(options, &WorkClassConfig::e2e_slo),
                             MemberGuardFor(config, options), below);
    case ClassLevel::kWeightedShares:
      return NewFairShareNode(
          ShareParams(config.vtc, ShareKey::kWorkClass,
                      WeightsFor(config.class_weights, options.work_classes)),
          below);
  }
  return below();
}

}  // namespace

std::unique_ptr<Policy> BuildTreePolicy(const PolicyTreeConfig& config,
                                        const SchedulerOptions& options) {
  // The rest of the rules depend on the class level, below.
  TreePolicyRules rules;
  rules.workflow_head_start = config.workflow_head_start;
  rules.backfill_wait = config.backfill_wait;
  // The reserve is for interactive arrivals: with no class targeting TTFT,
  // every request is background and there is nobody to keep room for.
  const bool interactive = std::any_of(
      options.work_classes.begin(), options.work_classes.end(),
      [](const WorkClassConfig& c) { return c.ttft_slo != absl::InfiniteDuration(); });
  if (config.class_level == ClassLevel::kPriority && config.priority.kv_reserve > 0 &&
      !options.work_classes.empty()) {
    TreePolicyRules::PriorityReserve& reserve = rules.priority_reserve;
    reserve.class_priority = ClassPriorities(options);
    const auto [lo, hi] =
        std::minmax_element(reserve.class_priority.begin(), reserve.class_priority.end());
    reserve.bottom = *lo;
    reserve.top = *hi;
    // One class priority: nobody ranks above anybody to keep room for.
    reserve.share = reserve.top > reserve.bottom ? config.priority.kv_reserve : 0;
    rules.reserve_waived_after = config.priority.aging_interval;
  }
  if (config.class_level == ClassLevel::kSlo) {
    rules.background_kv_reserve = interactive ? config.background_kv_reserve : 0;
    rules.reserve_waived_after = config.priority.aging_interval;
    rules.prefills_by_deadline = true;
    rules.background_prefill_tokens = interactive ? config.background_prefill_tokens : 0;
    rules.pauses_background = interactive && SwapsPreempted(options);
  }
  return NewTreePolicy(config.name, BuildRoot(config, options), rules);
}

}  // namespace hearth::policy_internal

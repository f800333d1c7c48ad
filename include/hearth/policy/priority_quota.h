// File: hearth/policy/priority_quota.h
//
// Priority levels with per-level token quotas and aging.
//
// A request's level is its work class's priority (WorkClassConfig::priority,
// from the scheduler's options) plus its own (RequestView::priority), summed
// in 64 bits; higher is more urgent. Admission offers the waiting
// request with the highest effective priority
//     effective = priority + floor((now - arrival_time) / aging_interval),
// ties going to the earlier arrival. A level that has served its quota in
// the current quota window (a token count, or a share of all tokens served in
// the window) is skipped while any level within its quota has waiting work;
// when only over-quota levels wait they are served anyway (work-conserving).
// Windows are tumbling: served counts reset every `quota_window`.
//
// Bound: a waiting request of priority p is outranked by no newly arriving
// request once it has waited (P - p + 1) * aging_interval, where P is the
// highest priority in use; from then on only requests that arrived before it
// and levels protected by their quota can be admitted ahead of it (an
// over-quota level waits at most until the window ends).
//
// Each level keeps its waiting requests in arrival order, so a level's oldest
// request also has the level's largest effective priority: a decision
// compares only the heads of the levels, O(levels), never the whole queue.
//
// Lower levels keep room for higher ones (kv_reserve, trunk reservation):
// admitting a request leaves a share of the cache free that grows as its
// level falls below the highest class priority, and a waiting request then
// evicts no one.
//
// Preemption follows one fixed order, the "virtual arrival"
// arrival_time - priority * aging_interval (with aging off: priority, then
// arrival), which ranks requests exactly as effective priority does at every
// instant. The victim is the running request latest in that order, provided
// it comes after the beneficiary, and for a waiting beneficiary (only with
// kv_reserve 0) by at least one aging interval (one level). Because the order never changes, the first
// request in it is never a victim and always finishes, even under recompute
// preemption; an aged request that was admitted is not thrown out by the
// flood it waited behind.
//
// Example:
//   hearth::PriorityQuotaOptions p;
//   p.aging_interval = absl::Seconds(20);
//   p.quota_window = absl::Seconds(10);
//   p.quotas = {{/*priority=*/4, /*tokens_per_window=*/0, /*max_share=*/0.5}};
//   options.policy_factory = *hearth::PriorityQuotaPolicyFactory(p);

#ifndef HEARTH_POLICY_PRIORITY_QUOTA_H_
#define HEARTH_POLICY_PRIORITY_QUOTA_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/policy/policy.h"

namespace hearth {

struct LevelQuota {
  // The level (class plus request priority) the quota applies to. Unique
  // within `quotas`.
  int32_t priority = 0;
  // Tokens (prefill plus decode) the level may be served per window before it
  // yields to levels within their quota. Must be >= 0; 0 means no token cap.
  int64_t tokens_per_window = 0;
  // Largest share of the window's tokens (all levels together) the level may
  // take while others wait: portable across machines, unlike a token count.
  // Must be in [0, 1]; 0 means no share cap. At least one of the two caps
  // must be set.
  double max_share = 0;
};

// PriorityQuotaOptions::kv_reserve's default: evicting lower levels to admit
// higher ones preempted dozens of times as often as FIFO on a household
// evening; a fifth of the cache kept free, graded by priority, admitted
// without any preemption and met more SLOs in every interactive class
// (figures: bench/RESULTS.md, "Figures behind the rules").
inline constexpr double kDefaultPriorityKvReserve = 0.2;

struct PriorityQuotaOptions {
  // Waiting time that raises a request's effective priority by one. Must be
  // > 0; InfiniteDuration() disables aging (and with it the wait bound).
  absl::Duration aging_interval = absl::Seconds(30);
  // Length of a quota window. Must be > 0 and finite.
  absl::Duration quota_window = absl::Seconds(10);
  // Levels without an entry here are unlimited.
  std::vector<LevelQuota> quotas;
  // Trunk reservation: the share of KV blocks a request of the lowest class
  // priority must leave free when it is admitted, falling linearly with its
  // level (class plus request priority) to none at the highest class
  // priority, so that more urgent arrivals find room instead of evicting
  // it; waived once the request has waited one aging_interval. While it is
  // above 0 a waiting request evicts no one (growth still preempts in the
  // fixed order below). Used by the "priority" policy
  // (ClassLevel::kPriority); the household tree keeps room with
  // PolicyTreeConfig::background_kv_reserve instead. In [0, 1); 0: none.
  double kv_reserve = kDefaultPriorityKvReserve;
};

// InvalidArgument naming the offending field, or OK.
absl::Status ValidatePriorityQuotaOptions(const PriorityQuotaOptions& options);

// Validates `options` and returns a factory of "priority" policies.
// `workflow_head_start`: see PolicyTreeConfig::workflow_head_start.
absl::StatusOr<PolicyFactory> PriorityQuotaPolicyFactory(
    const PriorityQuotaOptions& options,
    absl::Duration workflow_head_start = kDefaultWorkflowHeadStart);

}  // namespace hearth

#endif  // HEARTH_POLICY_PRIORITY_QUOTA_H_

// File: hearth/policy/policy_tree.h
//
// A policy tree composes the three orderings Hearth knows into one Policy:
//
//   class level    priority with quota and aging (groups by class plus
//                  request priority), or TTFT deadlines per class (the SLO
//                  level), or weighted fair shares between work classes,
//                  or none
//     user level   Virtual Token Counter between users, or none
//       request    FIFO or MLFQ among one user's requests of one class
//
// Each level picks one of its children (a class group, a user) and the child
// decides inside itself, so a decision costs O(depth * (levels + log n)).
// Service is charged at every level it passes. User counters are kept per
// class group: VTC fairness holds among the users of one class, while the
// class level decides how classes share the accelerator.
//
// Preemption works top-down: the class level decides whether a victim may be
// taken and from which group (for priority: only requests behind the
// beneficiary in its fixed aging order; for the SLO level: by deadline, and
// for a waiting beneficiary only background work), and the levels below
// choose within
// that group by their own rules. See vtc.h, priority_quota.h and mlfq.h.
//
// Prompts are charged at admission and settled per served chunk (see vtc.h),
// at every level that counts service (VTC counters, quotas); MLFQ quanta
// count only service actually received.
//
// The standalone "vtc", "priority" and "mlfq" policies are trees of one level
// over arrival order (or MLFQ alone), so they share this engine and its
// tests. "fifo" is not a tree (fifo.h): it needs none of the tree's service
// accounting, and shares only the arrival order with the trees' leaves.
//
// Example (the household default, with MLFQ inside each user):
//   hearth::PolicyTreeConfig tree = hearth::HouseholdTreeConfig();
//   tree.request_level = hearth::RequestLevel::kMlfq;
//   options.policy_factory = *hearth::PolicyTreeFactory(tree);

#ifndef HEARTH_POLICY_POLICY_TREE_H_
#define HEARTH_POLICY_POLICY_TREE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hearth/policy/mlfq.h"
#include "hearth/policy/policy.h"
#include "hearth/policy/priority_quota.h"
#include "hearth/policy/vtc.h"

namespace hearth {

enum class ClassLevel {
  // No class level: all requests form one group.
  kNone,
  // Groups by WorkClassConfig::priority + RequestView::priority;
  // PriorityQuotaOptions apply.
  kPriority,
  // Groups by work class; fair shares by `class_weights` (a VTC between
  // classes, charged with the VTC token weights).
  kWeightedShares,
  // Groups by work class, served by deadline: arrival (rank time) + the
  // class's WorkClassConfig::ttft_slo, earliest first, so requests with
  // slack yield to those without. A request past its deadline waits for
  // on-time ones, except that it goes before an on-time earliest deadline
  // with more than half its own target left. Classes without a target are background:
  // they rank at arrival + PriorityQuotaOptions::aging_interval (after every
  // interactive class with aging off), and only they are preempted to admit
  // a waiting request (none with background_kv_reserve, below, unless
  // preempted requests swap to a host tier). A background class with a
  // completion target (WorkClassConfig::e2e_slo) has its requests go ahead
  // of on-time work once a quarter of it has passed, unless their member
  // has most of the waiting requests (with the member guard).
  // PriorityQuotaOptions' quotas apply by priority.
  kSlo,
};

enum class UserLevel {
  kNone,
  // Virtual Token Counter between users; VtcOptions apply.
  kVtc,
};

enum class RequestLevel {
  // Arrival order, where a call of a running agent workflow ranks up to
  // `workflow_head_start` earlier (see below). A preempted request keeps its
  // place.
  kFifo,
  // Skip-join MLFQ; MlfqOptions apply.
  kMlfq,
};

struct PolicyTreeConfig {
  // Reported by Policy::name(). Must be non-empty.
  std::string name = "tree";
  ClassLevel class_level = ClassLevel::kPriority;
  UserLevel user_level = UserLevel::kVtc;
  RequestLevel request_level = RequestLevel::kFifo;

  PriorityQuotaOptions priority;
  // Share weight per work class for kWeightedShares, indexed by
  // WorkClassId::value(); classes beyond the end weigh 1. Each > 0. Empty:
  // each class weighs its WorkClassConfig::weight from the scheduler's
  // options.
  std::vector<double> class_weights;
  VtcOptions vtc;
  MlfqOptions mlfq;
  // Agent workflows, for the FIFO request level: a call naming a parent
  // (RequestSpec::parent) ranks as if it had arrived up to this much earlier,
  // but never before its workflow's first call, so the next call of a
  // running agent goes ahead of work that arrived during its parent's run
  // and tool time. Bounded so that a long-lived workflow (an hour of chat
  // turns) does not outrank everything that came after it started.
  // InfiniteDuration: rank every call at its workflow's arrival
  // (program-level first come, first served); zero: calls rank alone.
  // Must be >= 0.
  absl::Duration workflow_head_start = kDefaultWorkflowHeadStart;
  // Backfilling (Policy::MayAdmitPast): while the request the tree ranks
  // first finds no room and no victim, later requests that fit are admitted,
  // until it has waited this long (since arrival or its last preemption);
  // then it holds the line until memory frees for it. Under a cache held by
  // long contexts this is what lets a voice command pass a long chat turn
  // that cannot start yet. Zero: never (head of line waits, as under FIFO).
  // Must be >= 0.
  absl::Duration backfill_wait = absl::ZeroDuration();
  // For ClassLevel::kSlo: the share of KV blocks a request without a TTFT
  // target (a background class's, e.g. documents) must leave free when it is
  // admitted, so that interactive requests arriving meanwhile find room
  // without evicting it (Policy::AdmissionReserveShare); waived once it has
  // waited its aging interval (PriorityQuotaOptions::aging_interval). Only
  // when some work class has a TTFT target. With it a waiting request evicts
  // no one, since an evicted background request recomputes its long prompt;
  // except over a host tier (SchedulerOptions::preemption_mode kSwap with
  // kv.num_host_blocks > 0), where the victim is paused (swapped out) and a
  // queue of interactive arrivals would otherwise wait for background work
  // to end. In [0, 1); 0: none.
  double background_kv_reserve = 0;
  // For ClassLevel::kSlo: prefill tokens per step that requests without a
  // TTFT target may take together while anything decodes
  // (PrefillRules::background_tokens); only when some work class has a TTFT
  // target. Must be >= 0; 0: no cap.
  int32_t background_prefill_tokens = 0;
  // For ClassLevel::kSlo: the member guard, which shares a shortage between
  // household members (users) by their weights (UserConfig::weight, or
  // vtc.user_weights) instead of by deadline, across every work class. It
  // keeps a VTC counter per member over all classes (charged with the vtc
  // token weights, with the lift rule) and what each member holds (running
  // sequences, KV positions computed or reserved):
  //   - late work is served least-served member first, so a member's own
  //     backlog delays that member before anyone else, whatever its
  //     deadlines or stamped arrivals; a late head passes an on-time head
  //     with slack only when its member is served no more than that head's,
  //     and an urgent on-time head only when that head's member leads by
  //     more than `member_guard_gap`;
  //   - a waiting request with a TTFT target, once it has waited a quarter
  //     of that target, may preempt another member's running interactive
  //     request whose TTFT target is at least 4 times its own (voice over
  //     chat, not chat over agent work; background work is never preempted
  //     this way, its recompute costs more than the wait it saves) when
  //     that member holds more than its weighted share of the sequence cap
  //     or the KV cache (whichever is larger), has taken more than 1.75
  //     times its part of the service of the last 30-60 s (a member that
  //     floods the engine, not one whose long requests happen to pile up)
  //     and the beneficiary's member will hold at most half of its own,
  //     even with background_kv_reserve
  //     (which keeps room, not shares). Such a move never hands the lead
  //     back, so members cannot preempt each other in turns, and the core
  //     still prices each victim (SchedulerOptions::max_admission_waste_per_block).
  // Off: late work ranks by deadline and only background work is evicted.
  bool member_guard = true;
  // Counter lead, in weighted tokens (vtc weights), past which a member's
  // urgent on-time work yields to another member's late work. Must be >= 0
  // and finite.
  double member_guard_gap = 8192;
};

// The household preset's PolicyTreeConfig::backfill_wait: long enough for a
// long chat turn or a document to let a stream of voice commands and short
// turns pass while memory frees, short enough that it still starts within
// its class's patience.
inline constexpr absl::Duration kHouseholdBackfillWait = absl::Minutes(2);
// The household preset's PolicyTreeConfig::background_kv_reserve: near
// capacity a fifth of the cache raised the household's SLO capacity and
// halved its preemptions, where a larger reserve starved documents
// (figures: bench/RESULTS.md, "Figures behind the rules").
inline constexpr double kHouseholdBackgroundKvReserve = 0.2;
// The household preset's PolicyTreeConfig::background_prefill_tokens: near
// capacity, documents' full 512-token chunks beside decoding voice commands
// cost voice its TPOT target, and 128 keeps every class above 90% in SLO
// (figures: bench/RESULTS.md, "Figures behind the rules").
inline constexpr int32_t kHouseholdBackgroundPrefillTokens = 128;

// The household default: classes served by TTFT deadline (ClassLevel::kSlo:
// WorkClassConfig::ttft_slo; classes without one in the background, aged;
// quotas by priority), VTC between household members, FIFO within a member,
// backfilling for two minutes (backfill_wait), and a fifth of the cache kept
// for interactive arrivals while background work is admitted
// (background_kv_reserve; a waiting request then evicts no one, unless
// preemption swaps to a host tier), prefills
// by deadline with background ones held to 128 tokens a step while anything
// decodes (background_prefill_tokens). Named "household".
PolicyTreeConfig HouseholdTreeConfig();

// InvalidArgument naming the offending field, or OK.
absl::Status ValidatePolicyTreeConfig(const PolicyTreeConfig& config);

// Validates `config` and returns a factory of policies built from it.
absl::StatusOr<PolicyFactory> PolicyTreeFactory(const PolicyTreeConfig& config);

}  // namespace hearth

#endif  // HEARTH_POLICY_POLICY_TREE_H_

// File: hearth/policy/mlfq.h
//
// Preemptive multi-level feedback queue with skip-join (FastServe, Wu et al.
// 2023): approximates shortest-remaining-first without knowing output lengths.
//
// Level 0 is the most urgent; level i has quantum base_quantum * 2^i service
// units, where a prompt (or recomputed) token costs `prefill_token_cost` and a
// decoded token `decode_token_cost`. A new request skip-joins: it enters the
// highest level whose quantum covers its estimated prefill cost
// (prompt_tokens * prefill_token_cost), so long prompts do not first clog the
// top levels. A request whose service at its level exceeds the level's
// quantum is demoted one level (the last level keeps it). A waiting request
// that has waited longer than `starvation_bound` at a level is promoted to
// level 0, keeping its place in time, so nothing starves: it takes the next
// free slot. A promoted request does not preempt (with recompute, two long
// jobs promoted in turn could otherwise preempt each other forever).
//
// Admission offers level 0 first, within a level the longest waiting first.
// Preemption: for a waiting beneficiary the victim is a running request of a
// strictly lower level (the lowest level, latest arrival first) whose
// quantum ran out since it was admitted, so urgent work preempts demoted long
// jobs when memory or the sequence cap is short, at quantum boundaries as in
// FastServe (each admission buys at least one quantum of service), at most
// `max_preemptions_per_step` of them per step.
// For a running beneficiary (memory for its growth) the victim is a running
// request that arrived after it, taken from the lowest level that has one:
// levels move but arrival order does not, so the earliest running request is
// never displaced and recompute preemption cannot cycle.
//
// Agent workflows: MLFQ ranks by attained service, not by workflow. A
// workflow's next call is a new job that skip-joins by its own prompt, so a
// short next call outranks demoted long background work.
//
// Cost: O(levels + log n) per decision and per event; OnServed is O(1) per
// entry plus O(log n) for each demotion, with no allocation per step once
// the largest number of live requests has been seen.
//
// Example:
//   hearth::MlfqOptions m;
//   m.base_quantum = 32;
//   m.num_levels = 8;
//   options.policy_factory = *hearth::MlfqPolicyFactory(m);

#ifndef HEARTH_POLICY_MLFQ_H_
#define HEARTH_POLICY_MLFQ_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/policy/policy.h"

namespace hearth {

struct MlfqOptions {
  // Number of levels. Must be in [1, 32].
  int32_t num_levels = 8;
  // Quantum of level 0 in service units. Must be > 0 and finite.
  double base_quantum = 32.0;
  // Service units per prompt (or recomputed) token, and per decoded token.
  // Each must be >= 0 and finite.
  double prefill_token_cost = 1.0;
  double decode_token_cost = 1.0;
  // A request waiting longer than this at its level is promoted to level 0.
  // Must be > 0; InfiniteDuration() disables promotion.
  absl::Duration starvation_bound = absl::Seconds(60);
  // Quantum-boundary preemptions (running work yielding to waiting work of
  // a higher level) granted per step; jobs whose quantum ran out beyond it
  // yield in later steps. Each recompute preemption throws away a sequence's
  // KV and each one costs the step O(its blocks), so a burst of expiring
  // quanta is spread over steps instead of landing on one. Preemptions for a
  // running request's memory growth are not limited. Must be >= 0; 0 turns
  // time-slicing off (MLFQ then only orders admissions).
  int32_t max_preemptions_per_step = 1;
};

// InvalidArgument naming the offending field, or OK.
absl::Status ValidateMlfqOptions(const MlfqOptions& options);

// Validates `options` and returns a factory of "mlfq" policies.
absl::StatusOr<PolicyFactory> MlfqPolicyFactory(const MlfqOptions& options);

}  // namespace hearth

#endif  // HEARTH_POLICY_MLFQ_H_

// File: hearth/policy/mlfq.h
//
// Preemptive multi-level feedback queue with skip-join (FastServe, Wu et al.
// 2023): approximates shortest-remaining-first without knowing output lengths.
//
// Level 0 is the most urgent; level i holds requests whose attained
// service is at most base_quantum * 2^i service units (the last level holds
// the rest), where a prompt (or recomputed) token costs `prefill_token_cost`
// and a decoded token `decode_token_cost`. Service counts from arrival and
// is never reset (recomputing positions already charged is not charged
// again), so a request's level only goes down, by the service it attained.
//
// Skip-join: a new request enters the level of the service it is expected
// to need: prompt_tokens * prefill_token_cost, plus, when the host predicted
// its output (RequestView::predicted_output) and `use_predicted_output` is
// set, expected_tokens * decode_token_cost. Without a prediction a long
// prompt skips the top levels; with one, a request predicted to be long
// starts low and one predicted short starts high. A wrong prediction is
// corrected by attained service: an under-predicted request sinks as it is
// served (an over-predicted one waits longer than it had to).
//
// Admission offers level 0 first, within a level the longest waiting first.
// Starvation: a waiting request that arrived longer than `starvation_bound`
// ago is starving (its job completion time already exceeds the bound). While
// any request starves, a share `starving_share` of admissions goes to the
// earliest arrival waiting, of any level (the starving lane); the rest keep
// the level order: the oldest work keeps moving without turning the levels
// into one FIFO queue under overload. A request preempted to admit a waiting
// one (time-slicing) stays out of the lane until it is admitted again, so it
// is never offered before the request it yielded to, and long jobs cannot
// take back half the admissions from the short ones that passed them; one
// preempted for a running request's memory growth joins the lane at once,
// so growth under overload cannot starve it. A request admitted by the
// starving lane does not preempt (with recompute, two long jobs could
// otherwise preempt each other forever); it takes the next slot that frees.
//
// Preemption: for a waiting beneficiary the victim is a running request of a
// strictly lower level (the lowest level, latest arrival first) whose
// quantum ended since it was admitted: its level dropped, or, in the last
// level, which has no lower one, it received `base_quantum` service units
// since admission (the last level is round-robin). So urgent work preempts
// long jobs when memory or the sequence cap is short, at quantum boundaries
// as in FastServe (each admission buys at least one quantum of service), at
// most `max_preemptions_per_step` of them per step.
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
  // A waiting request that arrived longer ago than this is starving. Must be > 0;
  // InfiniteDuration() turns the starving lane off.
  absl::Duration starvation_bound = absl::Seconds(60);
  // Share of admissions the starving lane takes while anything starves.
  // Must be in (0, 1]; 1 admits every starving request before any other.
  double starving_share = 0.5;
  // Whether skip-join counts a request's predicted output
  // (RequestView::predicted_output); false ranks by prompt alone, as
  // without predictions.
  bool use_predicted_output = true;
  // Quantum-boundary preemptions (running work yielding to waiting work of
  // a higher level) granted per step; jobs whose quantum ran out beyond it
  // yield in later steps. Each recompute preemption throws away a sequence's
  // KV and each one costs the step O(its blocks), so a burst of expiring
  // quanta is spread over steps instead of landing on one. Preemptions for a
  // running request's memory growth are not limited. Must be >= 0; 0 turns
  // time-slicing off (MLFQ then only orders admissions).
  int32_t max_preemptions_per_step = 1;
  // Whether quantum-boundary preemption also happens when the scheduler
  // preempts by recompute (no host tier: SchedulerOptions::preemption_mode
  // kRecompute or no host blocks). Off by default: the victim's whole context
  // is then computed again, and near capacity MLFQ without it met its SLOs as
  // often with a fraction of the preemptions (figures: bench/RESULTS.md,
  // "Figures behind the rules"). With swap, time-slicing moves blocks instead
  // and stays on.
  bool time_slice_with_recompute = false;
};

// InvalidArgument naming the offending field, or OK.
absl::Status ValidateMlfqOptions(const MlfqOptions& options);

// Validates `options` and returns a factory of "mlfq" policies.
absl::StatusOr<PolicyFactory> MlfqPolicyFactory(const MlfqOptions& options);

}  // namespace hearth

#endif  // HEARTH_POLICY_MLFQ_H_

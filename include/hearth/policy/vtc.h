// File: hearth/policy/vtc.h
//
// Virtual Token Counter (Sheng et al., "Fairness in Serving Large Language
// Models", OSDI'24): token-level fair sharing between users.
//
// Every user has a counter of weighted service: each prompt (or recomputed)
// token adds `prompt_token_weight / weight(user)`, each decoded token
// `decode_token_weight / weight(user)`. As in the paper the prompt is charged
// when the request is admitted, so the next admission of the same step
// already sees it; it is then settled against what is actually served, chunk
// by chunk: a request preempted or removed before its prefill completes, or
// whose prompt was partly found in the prefix cache, gets the unserved part
// back.
//
// Admission offers the backlogged user (one with waiting requests) whose
// counter is smallest; that user's requests go in arrival order. When a user
// becomes backlogged (it had no waiting request before), its counter is lifted
// to max(own, min counter of the users already backlogged), or, when nobody is
// backlogged, to max(own, counter of the user admitted last). Idle time thus
// earns no credit: a returning user cannot cash in a burst of catch-up
// service. Between two continuously backlogged users the service difference
// stays within 2 * max(prompt_token_weight * L_input, decode_token_weight * M)
// where L_input is the longest prompt and M the most tokens the running batch
// can hold (its KV capacity in tokens).
//
// Preemption: for a running beneficiary (memory for its growth is short) the
// victim is a running request of the user with the largest counter, provided
// that counter is not below the beneficiary's user's; within one user the
// latest arrival goes first, and never one that arrived before the
// beneficiary. For a waiting beneficiary VTC preempts only when
// `preempt_for_admission` is set, and then only requests of a user whose
// counter is larger by more than `admission_preemption_gap` (recomputing
// wastes work; the paper's VTC is non-preemptive).
//
// Memory: the paper's VTC assumes the offered request fits. When it does not
// (and has no victim), later requests that fit are admitted past it for up to
// `backfill_wait` (PolicyTreeConfig::backfill_wait); then it holds the line
// until memory frees. Without this, one user's long document waiting for
// room stalls every other user's short turns behind it (figures:
// bench/RESULTS.md, "Figures behind the rules").
//
// Cost: O(log users) per event and per served entry; no allocation per step
// once every user has been seen.
//
// Example:
//   hearth::VtcOptions vtc;
//   vtc.user_weights = {1.0, 2.0};          // user 1 gets twice user 0's share
//   absl::StatusOr<hearth::PolicyFactory> factory = hearth::VtcPolicyFactory(vtc);
//   options.policy_factory = *factory;

#ifndef HEARTH_POLICY_VTC_H_
#define HEARTH_POLICY_VTC_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/policy/policy.h"

namespace hearth {

struct VtcOptions {
  // w_p: counter charge per prompt or recomputed token. Must be >= 0 and
  // finite; with decode_token_weight not both 0.
  double prompt_token_weight = 1.0;
  // w_q: counter charge per decoded token. Must be >= 0 and finite.
  double decode_token_weight = 2.0;
  // Share weight per user, indexed by UserId::value(). A user of weight 2 is
  // charged half. Empty (the default): each user weighs its UserConfig::weight
  // from the scheduler's options. Non-empty: these weights win over the
  // options, and users beyond the end weigh 1. Each must be > 0 and finite.
  std::vector<double> user_weights;
  // Whether a waiting request may preempt a running request of a user whose
  // counter is larger by more than `admission_preemption_gap` (see the file
  // comment). Off by default.
  bool preempt_for_admission = false;
  // Counter gap (weighted tokens) a waiting request's user must trail by to
  // preempt. An admission moves counters by at most w_p times its prompt plus
  // output, and a preemption gives the unserved prompt back; a gap above
  // that (w_p * context length) keeps two users from preempting each other
  // back and forth without progress. Must be >= 0 and finite.
  double admission_preemption_gap = 8192;
};

// InvalidArgument naming the offending field, or OK.
absl::Status ValidateVtcOptions(const VtcOptions& options);

// The "vtc" policy's default backfill_wait (see the file comment): as long
// as the household preset's, for the same reason.
inline constexpr absl::Duration kDefaultVtcBackfillWait = absl::Minutes(2);

// Validates `options` and returns a factory of "vtc" policies.
// `workflow_head_start`: see PolicyTreeConfig::workflow_head_start.
// `backfill_wait`: see the file comment; zero: the offered request always
// holds the line. Must be >= 0.
absl::StatusOr<PolicyFactory> VtcPolicyFactory(
    const VtcOptions& options,
    absl::Duration workflow_head_start = kDefaultWorkflowHeadStart,
    absl::Duration backfill_wait = kDefaultVtcBackfillWait);

}  // namespace hearth

#endif  // HEARTH_POLICY_VTC_H_

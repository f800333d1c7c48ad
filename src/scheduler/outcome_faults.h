// File: src/scheduler/outcome_faults.h
//
// The rules one sequence's outcome must keep, checked for every sequence of
// every step before any of an outcome is applied: finding a fault is inline
// and branch-light (the hot path), describing one is not (it happens once,
// and the whole outcome is refused).

#ifndef HEARTH_SCHEDULER_OUTCOME_FAULTS_H_
#define HEARTH_SCHEDULER_OUTCOME_FAULTS_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth::internal {

// What is wrong with one sequence's outcome, in the order the checks are
// reported.
enum class OutcomeFault : uint8_t {
  kNone,
  kId,
  kSampling,
  kFinishLength,
  kFinishUnknown,
  kFinishWithoutToken,
  kTokenRange,
  kDrafts,
};

// The fault of outcome `o` for plan entry `s`; `vocab_size` by model (0:
// unknown, any id is taken).
inline OutcomeFault FindFault(const ScheduledSequence& s, const SequenceOutcome& o,
                              const int32_t* vocab_size) {
  if (o.id != s.id) return OutcomeFault::kId;
  if (o.accepted_drafts != 0) [[unlikely]] {
    if (o.accepted_drafts < 0 || o.accepted_drafts > s.draft_tokens || !o.error.empty() ||
        o.out_of_kv || !o.produced_token) {
      return OutcomeFault::kDrafts;
    }
  }
  if (!o.error.empty() || o.out_of_kv) return OutcomeFault::kNone;
  if (o.produced_token != s.sample) return OutcomeFault::kSampling;
  if (o.finish == FinishReason::kLength) return OutcomeFault::kFinishLength;
  if (o.finish > FinishReason::kLength) return OutcomeFault::kFinishUnknown;
  if (o.finish != FinishReason::kNone && !o.produced_token) {
    return OutcomeFault::kFinishWithoutToken;
  }
  const int32_t vocab = vocab_size[s.model.value()];
  if (o.produced_token && (o.token < 0 || (vocab > 0 && o.token >= vocab))) {
    return OutcomeFault::kTokenRange;
  }
  return OutcomeFault::kNone;
}

// The same for an entry voided while its plan was outstanding: only what
// keeps the outcome's lists aligned, its id and accepted drafts that
// StepOutcome::draft_ids holds.
inline OutcomeFault FindVoidFault(const ScheduledSequence& s, const SequenceOutcome& o) {
  if (o.id != s.id) return OutcomeFault::kId;
  if (o.accepted_drafts < 0 || o.accepted_drafts > s.draft_tokens) return OutcomeFault::kDrafts;
  return OutcomeFault::kNone;
}

// The refusal of step `step`'s outcome at sequence `i`.
absl::Status OutcomeMismatch(uint64_t step, size_t i, absl::string_view what);

// The message for `fault` of `plan`'s sequence `i`, whose outcome is `o`
// (`vocab_size` as for FindFault).
absl::Status DescribeFault(const StepPlan& plan, size_t i, OutcomeFault fault,
                           const SequenceOutcome& o, const int32_t* vocab_size);

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_OUTCOME_FAULTS_H_

// File: hearth/exec/step_outcome_fill.h
//
// How an engine fills a StepOutcome, in one place for every executor and host
// loop: starting a step's outcome, recording a sampled token with its finish
// reason, and failing a whole step. Executors that use these report the same
// thing for the same event, so the scheduler sees one engine contract however
// the tokens were computed.
//
// Thread-safety: plain functions over the caller's objects.
//
// Example (inside StepExecutor::Execute):
//   hearth::StartStepOutcome(plan, outcome);
//   for (const hearth::ScheduledSequence& s : plan.sequences) {
//     hearth::SequenceOutcome& o = outcome->sequences.emplace_back();
//     o.id = s.id;
//     if (!s.sample) continue;
//     const hearth::TokenId token = Sample(s);
//     hearth::RecordSampledToken(token, hearth::IsStopToken(token, stop_token), o);
//   }

#ifndef HEARTH_EXEC_STEP_OUTCOME_FILL_H_
#define HEARTH_EXEC_STEP_OUTCOME_FILL_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth {

// StartStepOutcome()
//
// Resets `outcome` to answer `plan`: its step number, no sequences, no failed
// loads, and completed_at InfinitePast (the plan's `now`). Keeps the vectors'
// capacity, so an engine reusing one outcome does not allocate per step.
void StartStepOutcome(const StepPlan& plan, StepOutcome* outcome);

// IsStopToken()
//
// Whether sampling `token` ends a request for an engine configured with one
// stop token; a negative `stop_token` means the engine has none.
bool IsStopToken(TokenId token, TokenId stop_token);

// ValidateStopToken()
//
// InvalidArgument unless `stop_token` is negative (none) or a token of a
// vocabulary of `vocab_size`.
absl::Status ValidateStopToken(TokenId stop_token, int32_t vocab_size);

// RecordSampledToken()
//
// Records on `o` that the engine sampled `token`: produced_token is set, and
// finish is kStopToken when `ends_request` (the engine's stop condition held
// for this token), kNone otherwise. kLength is never set here: the scheduler
// decides it.
void RecordSampledToken(TokenId token, bool ends_request, SequenceOutcome& o);

// RecordEmbedding()
//
// Appends a pooling sequence's vector to outcome.embeddings, scaled to unit
// length (as embedding APIs return them; a zero vector stays zero).
void RecordEmbedding(absl::Span<const float> vector, StepOutcome& outcome);

// FailWholeStep()
//
// Replaces the sequences of `outcome` with one failed entry per planned
// sequence, in plan order, each with the error "step failed: <why.message()>",
// and resets completed_at to the plan's `now`, so that Scheduler::Complete
// accepts it and no request is lost: each is retried up to its class's
// max_retries, then ends as failed. failed_loads the engine already reported
// are kept. REQUIRES: !why.ok().
void FailWholeStep(const StepPlan& plan, const absl::Status& why,
                   StepOutcome* outcome);

}  // namespace hearth

#endif  // HEARTH_EXEC_STEP_OUTCOME_FILL_H_

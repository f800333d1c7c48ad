// File: hearth/scheduler/step_outcome.h
//
// `StepOutcome` is what the engine reports after running a StepPlan: for each
// scheduled sequence, in the plan's order, whether a token was produced, which
// one, and whether the sequence ended or failed. The scheduler checks that the
// outcome matches the outstanding plan and rejects it whole, changing nothing,
// when it does not.
//
// Example:
//   hearth::StepOutcome outcome;
//   for (const hearth::ScheduledSequence& s : plan.sequences) {
//     hearth::SequenceOutcome& o = outcome.sequences.emplace_back();
//     o.id = s.id;
//     if (s.sample) { o.token = Sample(s); o.produced_token = true; }
//   }
//   if (absl::Status s = scheduler.Complete(outcome); !s.ok()) return s;

#ifndef HEARTH_SCHEDULER_STEP_OUTCOME_H_
#define HEARTH_SCHEDULER_STEP_OUTCOME_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_state.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth {

struct SequenceOutcome {
  // Must equal the id of the plan's sequence at the same index.
  RequestId id;
  // Whether the engine sampled a token. Required to equal the plan's `sample`
  // unless the sequence failed.
  bool produced_token = false;
  // The sampled token id, when the engine computes real tokens; any value
  // otherwise (it is recorded only for requests submitted with token ids).
  TokenId token = 0;
  // kStopToken or kStopString when the sampled token ends the request;
  // kNone to continue. kLength is decided by the scheduler, not the engine.
  FinishReason finish = FinishReason::kNone;
  // A speculative decode (ScheduledSequence::draft_tokens > 0): how many of
  // its drafts the engine verified and accepted, in [0, draft_tokens]; their
  // ids are the next `accepted_drafts` entries of StepOutcome::draft_ids.
  // They come before `token`, which is then the token sampled after the
  // last accepted draft (1 + accepted_drafts new tokens in all). A draft
  // that ends the request must be reported as `token` with `finish` set,
  // the drafts before it accepted. Drafts past max_new_tokens or the
  // context are dropped (the request then ends with kLength). 0 for every
  // other sequence, and for one that failed or ran out of KV. (The ids live
  // in the StepOutcome so that this struct stays one cache line: Complete
  // reads one per sequence per step.)
  int32_t accepted_drafts = 0;
  // Non-empty when the engine failed this sequence; no token is applied, and
  // the request is retried from scratch up to its class's max_retries, then
  // ends as kFailed with this message.
  std::string error;
  // The engine ran out of KV memory of its own for this sequence (its cache
  // is smaller than the scheduler's block count, or fragmented) and did not
  // run it. No token is applied (produced_token and finish are ignored).
  // The scheduler preempts it by recompute: same RequestId, progress kept in
  // tokens but its KV recomputed, nothing recorded as a failure; the next
  // plan lists it in `preempted` with cause kEngineOutOfKv, and it is counted
  // in SchedulerStats::preemptions and engine_out_of_kv_preemptions and in
  // RequestResult::preemptions (so also against
  // SchedulerOptions::max_preemptions_per_request, which then keeps the
  // scheduler from choosing it as a victim). The report that reaches
  // SchedulerOptions::max_out_of_kv_reports without a token since the first
  // fails the request instead (kFailed, not counted as a preemption).
  // Ignored when `error` is set.
  bool out_of_kv = false;
};

// A model load from the plan's model_commands that the engine could not do.
struct ModelLoadFailure {
  ModelId model;
  std::string error;
};

struct StepOutcome {
  // The plan's step number this outcome answers.
  uint64_t step = 0;
  // When the engine finished the step: first tokens and finishes are stamped
  // with it. InfinitePast (the default) means the plan's `now`. Before the
  // plan's `now`, or infinite, is InvalidArgument.
  // Steps end in order: a step runs after the one completed before it, so
  // an end (given or the default) earlier than that step's is taken as that
  // step's end. With overlapped planning this is the usual case for the
  // default: step N+1's `now` precedes step N's completed_at. So token,
  // first-token and finish stamps, and the built-in metrics and timeline
  // (which apply the same rule), never go backwards from step to step. A
  // later Plan's `now` before this end is taken as this end (Plan()).
  absl::Time completed_at = absl::InfinitePast();
  // Exactly one entry per planned sequence, in plan order.
  std::vector<SequenceOutcome> sequences;
  // The ids of every speculative decode's accepted drafts, sequence after
  // sequence in plan order (SequenceOutcome::accepted_drafts of each);
  // exactly their sum. Empty without speculative decoding.
  std::vector<TokenId> draft_ids;
  // Loads in the plan's model_commands that failed; every other load in the
  // plan is taken as done. Requests waiting for a failed model end as failed.
  std::vector<ModelLoadFailure> failed_loads;
  // The vectors of the step's pooling sequences (ScheduledSequence::pool)
  // that neither failed nor ran out of KV, in plan order, `embedding_width`
  // floats each: the engine's channel to its host (EngineHooks see the
  // outcome with the step, overlap or not). Complete does not read them.
  std::vector<float> embeddings;
  int32_t embedding_width = 0;
};

}  // namespace hearth

#endif  // HEARTH_SCHEDULER_STEP_OUTCOME_H_

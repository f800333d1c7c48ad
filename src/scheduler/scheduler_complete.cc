// Scheduler::Impl::Complete: validate the engine's outcome against the
// outstanding plan as a whole, then apply it.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/outcome_faults.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::FindFault;
using internal::FindVoidFault;
using internal::OutcomeFault;
using internal::OutcomeMismatch;
using internal::RequestRecord;
using internal::RunList;

absl::Status Scheduler::Impl::Complete(const StepOutcome& outcome) {
  if (step_.outstanding == 0) {
    return absl::FailedPreconditionError(
        "no plan is outstanding; call Plan() before Complete()");
  }
  // With two plans outstanding, this outcome answers the older one.
  const int newest = 1 - other_index();
  const bool older = step_.outstanding == 2;
  if (older) SelectBuffer(1 - newest);
  absl::Status applied = CompleteSelected(outcome);
  if (applied.ok()) table_.StepCompleted(outcome.step);
  if (older) SelectBuffer(newest);
  if (applied.ok()) --step_.outstanding;
  return applied;
}

absl::Status Scheduler::Impl::CompleteSelected(const StepOutcome& outcome) {
  const absl::Time reported =
      outcome.completed_at == absl::InfinitePast() ? step_.plan->now : outcome.completed_at;
  if (absl::Status valid = ValidateOutcome(outcome, reported); !valid.ok()) return valid;
  // A step runs after the one before it, so it ends no earlier: with
  // overlapped planning step N+1's now (its default completion) may precede
  // step N's completed_at. Clamped, every stamp stays in order
  // (step_outcome.h).
  const absl::Time done = std::max(reported, step_.latest_done);
  step_.latest_done = done;
  if (tokens_.tracks_tpot() && outcome.completed_at != absl::InfinitePast()) {
    // A step planned ahead started when the one before it ended.
    tokens_.ObserveStep(step_.plan->num_batched_tokens,
                        done - std::max(step_.plan->now, step_.last_done));
    step_.last_done = done;
  }

  outputs_.served.clear();
  // Held in locals: the loop writes through records, so the compiler would
  // otherwise reload every vector's data pointer each iteration. Nothing in
  // the loop resizes these vectors.
  RequestRecord* slab = table_.data();
  const uint32_t* slots = step_.slots->data();
  const ScheduledSequence* planned = step_.plan->sequences.data();
  const SequenceOutcome* got = outcome.sequences.data();
  const int32_t* context_length = limits_.context_length.data();
  // Each speculative decode takes its accepted drafts' ids from here, in
  // plan order.
  const TokenId* draft_ids = outcome.draft_ids.data();
  const size_t n = outcome.sequences.size();
  if (step_.plan->voided.empty()) [[likely]] {
    for (size_t i = 0; i < n; ++i) {
      if (i + kRecordPrefetch < n) Prefetch(slots[i + kRecordPrefetch], 1);
      ApplySequenceOutcome(slab[slots[i]], planned[i], got[i], context_length, draft_ids, done);
    }
  } else {
    // Overlapped planning: voided entries are skipped, their accepted
    // drafts' ids too.
    for (size_t i = 0; i < n; ++i) {
      if (slots[i] == internal::kVoidSlot) {
        draft_ids += got[i].accepted_drafts;
        continue;
      }
      if (i + kRecordPrefetch < n && slots[i + kRecordPrefetch] != internal::kVoidSlot) {
        Prefetch(slots[i + kRecordPrefetch], 1);
      }
      ApplySequenceOutcome(slab[slots[i]], planned[i], got[i], context_length, draft_ids, done);
    }
  }
  if (tokens_.tracks_tpot()) tokens_.set_tpot_step_allowance(TpotStepAllowance(done));
  if (!step_.plan->model_commands.empty()) FinishModelLoads(outcome, done);
  // Swap-ins of this step have been copied: their host blocks are free now
  // (not those of a step planned after it, whose copies have not run).
  kv_.ReleaseDeferredHost(step_.outstanding == 2 ? std::exchange(step_.host_deferred_in_flight, 0)
                                                 : SIZE_MAX);

  policy_->OnServed(outputs_.served, done);
  if (sink_ != nullptr) sink_->OnStep(*step_.plan, outcome);
  return absl::OkStatus();
}

absl::Status Scheduler::Impl::ValidateOutcome(const StepOutcome& outcome,
                                              absl::Time done) const {
  if (outcome.step != step_.plan->step) {
    return absl::InvalidArgumentError(absl::StrCat("outcome answers step ", outcome.step,
                                                   " but the outstanding plan is step ",
                                                   step_.plan->step, "; nothing was applied"));
  }
  if (done < step_.plan->now || done == absl::InfiniteFuture()) {
    return absl::InvalidArgumentError(
        absl::StrCat("completed_at (", absl::FormatTime(done), ") is before the plan's now (",
                     absl::FormatTime(step_.plan->now), ") or infinite; nothing was applied"));
  }
  if (outcome.sequences.size() != step_.plan->sequences.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("outcome has ", outcome.sequences.size(), " sequences but step ",
                     step_.plan->step, " planned ", step_.plan->sequences.size(),
                     "; report exactly one per planned sequence, in plan order"));
  }
  for (const ModelLoadFailure& f : outcome.failed_loads) {
    const bool planned =
        std::any_of(step_.plan->model_commands.begin(), step_.plan->model_commands.end(),
                    [&](const ModelCommand& c) {
                      return c.kind == ModelCommandKind::kLoad && c.model == f.model;
                    });
    if (!planned) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed_loads names model ", f.model.ToString(), ", which step ",
                       step_.plan->step, " did not ask to load; nothing was applied"));
    }
  }
  // The check runs for every sequence of every step; the message is built
  // only for the one that fails it.
  const int32_t* vocab_size = limits_.vocab_size.data();
  const ScheduledSequence* planned = step_.plan->sequences.data();
  const SequenceOutcome* got = outcome.sequences.data();
  const size_t n = outcome.sequences.size();
  size_t accepted = 0;
  if (step_.plan->voided.empty()) [[likely]] {
    for (size_t i = 0; i < n; ++i) {
      const OutcomeFault fault = FindFault(planned[i], got[i], vocab_size);
      if (fault != OutcomeFault::kNone) [[unlikely]] {
        return internal::DescribeFault(*step_.plan, i, fault, got[i], vocab_size);
      }
      accepted += static_cast<size_t>(got[i].accepted_drafts);
    }
  } else {
    const uint32_t* slots = step_.slots->data();
    for (size_t i = 0; i < n; ++i) {
      const OutcomeFault fault = slots[i] == internal::kVoidSlot
                                     ? FindVoidFault(planned[i], got[i])
                                     : FindFault(planned[i], got[i], vocab_size);
      if (fault != OutcomeFault::kNone) [[unlikely]] {
        return internal::DescribeFault(*step_.plan, i, fault, got[i], vocab_size);
      }
      accepted += static_cast<size_t>(got[i].accepted_drafts);
    }
  }
  if (accepted > 0 || !outcome.draft_ids.empty()) [[unlikely]] {
    return CheckDraftIds(outcome, accepted);
  }
  return absl::OkStatus();
}

absl::Status Scheduler::Impl::CheckDraftIds(const StepOutcome& outcome, size_t accepted) const {
  const std::vector<TokenId>& ids = outcome.draft_ids;
  if (accepted != ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "outcome of step ", step_.plan->step, ": draft_ids holds ", ids.size(),
        " ids but the sequences accepted ", accepted,
        " drafts; list exactly the accepted drafts' ids, in plan order; nothing was applied"));
  }
  // A sequence's accepted drafts are the next ids, judged by its own model's
  // vocabulary. Models without one only rule out negative ids: one pass over
  // the contiguous ids, and the walk below only when a vocabulary or a
  // negative id asks for it.
  const bool negative = *std::min_element(ids.begin(), ids.end()) < 0;
  const bool vocabularies = std::any_of(limits_.vocab_size.begin(), limits_.vocab_size.end(),
                                        [](int32_t v) { return v > 0; });
  if (!negative && !vocabularies) return absl::OkStatus();
  size_t at = 0;
  for (size_t i = 0; i < outcome.sequences.size(); ++i) {
    const auto n = static_cast<size_t>(outcome.sequences[i].accepted_drafts);
    if (absl::Status s = CheckDraftRange(outcome, i, at); !s.ok()) return s;
    at += n;
  }
  return absl::OkStatus();
}

absl::Status Scheduler::Impl::CheckDraftRange(const StepOutcome& outcome, size_t i,
                                              size_t at) const {
  const auto accepted = static_cast<size_t>(outcome.sequences[i].accepted_drafts);
  const int32_t vocab = limits_.vocab_size[step_.plan->sequences[i].model.value()];
  for (size_t d = at; d < at + accepted; ++d) {
    const TokenId id = outcome.draft_ids[d];
    if (id < 0 || (vocab > 0 && id >= vocab)) {
      return OutcomeMismatch(step_.plan->step, i,
                             absl::StrCat("accepted draft token ", id, " is outside [0, ",
                                          vocab > 0 ? vocab : INT32_MAX, ")"));
    }
  }
  return absl::OkStatus();
}

[[gnu::always_inline]] inline void Scheduler::Impl::ReleaseRejectedDrafts(RequestRecord& r) {
  // Blocks taken only for rejected drafts go back, but not the one the next
  // token (at position `computed`) is written into: the next step would
  // only take it again.
  const int32_t keep = BlocksFor(r.computed + 1);
  if (r.kv.num_blocks() > keep) ReleaseBlocks(r, static_cast<size_t>(keep));
}

// Inlined into Complete's per-sequence loop, which it is the body of.
[[gnu::always_inline]] inline void Scheduler::Impl::ApplySequenceOutcome(RequestRecord& r, const ScheduledSequence& s,
                                           const SequenceOutcome& o,
                                           const int32_t* context_length,
                                           const TokenId*& draft_ids, absl::Time done) {
  if (!o.error.empty()) [[unlikely]] {
    if (r.has_spans) encoder_.DropEncodedBy(r.spans, r.id, *step_.plan);
    RetryOrFail(r, o.error, done);
    return;
  }
  if (o.out_of_kv) [[unlikely]] {
    PreemptOutOfKv(r, done);
    return;
  }
  if (s.draft_tokens > 0) [[unlikely]] {
    const TokenId* drafts = draft_ids;
    draft_ids += o.accepted_drafts;
    // The plan kept the drafts within the request's limits, so most steps
    // apply every token at once (a decode already has its first token).
    const int32_t produced = o.accepted_drafts + 1;
    if (o.finish == FinishReason::kNone && !r.has_token_ids &&
        r.output_tokens + produced < r.max_new_tokens &&
        r.length() + produced < context_length[r.model.value()]) [[likely]] {
      r.output_tokens += produced;
      r.computed = s.start_position + produced;
      outputs_.served.push_back({r.id, r.user, r.work_class, 0, produced});
      ReleaseRejectedDrafts(r);
      return;
    }
    ApplySpeculativeDecode(r, s, o, drafts, context_length[r.model.value()], done);
    return;
  }
  outputs_.served.push_back(
      {r.id, r.user, r.work_class, s.decode ? 0 : s.num_tokens, s.decode ? 1 : 0});
  r.computed = s.start_position + s.num_tokens;
  if (o.produced_token) {
    ++r.output_tokens;
    if (r.has_token_ids) r.tokens.push_back(o.token);
    if (r.awaiting_first_token) {
      r.awaiting_first_token = false;
      r.first_token_time = done;
      Emit(RequestEventKind::kFirstToken, r, done);
      // Its prompt's blocks are cached now: the other samples may run.
      if (r.num_samples > 1 && r.sample_index == 0) {
        intake_.group_releases.emplace_back(r.id, r.num_samples);
      }
    }
    FinishReason reason = o.finish;
    if (reason == FinishReason::kNone &&
        (r.output_tokens >= r.max_new_tokens || r.length() >= context_length[r.model.value()])) {
      reason = FinishReason::kLength;
    }
    if (reason != FinishReason::kNone) {
      // Its blocks stay cached for the member's next request (a one-token
      // answer's whole prompt, a chat's last turn).
      if (r.has_token_ids) kv_.RegisterFullBlocks(r.kv, r.tokens, r.computed);
      Terminate(r, RequestPhase::kFinished, reason, "", done);
      return;
    }
  } else if (s.pool) [[unlikely]] {
    // The vector is the embedding's only output: its TTFT, and its end.
    r.awaiting_first_token = false;
    r.first_token_time = done;
    Emit(RequestEventKind::kFirstToken, r, done);
    if (r.has_token_ids) kv_.RegisterFullBlocks(r.kv, r.tokens, r.computed);
    Terminate(r, RequestPhase::kFinished, FinishReason::kPooled, "", done);
    return;
  }
  if (r.has_token_ids) kv_.RegisterFullBlocks(r.kv, r.tokens, r.computed);
  if (r.list == RunList::kPrefilling && r.decoding()) MoveToDecoding(r);
}

void Scheduler::Impl::ApplySpeculativeDecode(RequestRecord& r, const ScheduledSequence& s,
                                             const SequenceOutcome& o, const TokenId* drafts,
                                             int32_t context_length, absl::Time done) {
  // The accepted drafts, then the token sampled after them; each is checked
  // against the request's limits as it is applied, and what lies beyond
  // them is dropped.
  int32_t applied = 0;
  FinishReason reason = FinishReason::kNone;
  const auto apply = [&](TokenId token) {
    ++r.output_tokens;
    if (r.has_token_ids) r.tokens.push_back(token);
    ++applied;
    return r.output_tokens >= r.max_new_tokens || r.length() >= context_length;
  };
  for (int32_t d = 0; d < o.accepted_drafts && reason == FinishReason::kNone; ++d) {
    if (apply(drafts[d])) reason = FinishReason::kLength;
  }
  if (reason == FinishReason::kNone) {
    const bool at_limit = apply(o.token);
    reason = o.finish != FinishReason::kNone ? o.finish
             : at_limit                      ? FinishReason::kLength
                                             : FinishReason::kNone;
  }
  // Positions with valid KV: the fed token and the accepted drafts.
  r.computed = s.start_position + applied;
  outputs_.served.push_back({r.id, r.user, r.work_class, 0, applied});
  if (reason != FinishReason::kNone) {
    if (r.has_token_ids) kv_.RegisterFullBlocks(r.kv, r.tokens, r.computed);
    Terminate(r, RequestPhase::kFinished, reason, "", done);
    return;
  }
  ReleaseRejectedDrafts(r);
  if (r.has_token_ids) kv_.RegisterFullBlocks(r.kv, r.tokens, r.computed);
}

}  // namespace hearth

// Scheduler::Impl::Complete: validate the engine's outcome against the
// outstanding plan as a whole, then apply it.

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;
using internal::RunList;

namespace {

absl::Status Mismatch(uint64_t step, size_t i, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "outcome of step ", step, ", sequence ", i, ": ", what,
      "; nothing was applied"));
}

}  // namespace

absl::Status Scheduler::Impl::Complete(const StepOutcome& outcome) {
  if (!plan_outstanding_) {
    return absl::FailedPreconditionError(
        "no plan is outstanding; call Plan() before Complete()");
  }
  if (outcome.step != plan_.step) {
    return absl::InvalidArgumentError(absl::StrCat(
        "outcome answers step ", outcome.step, " but the outstanding plan is step ",
        plan_.step, "; nothing was applied"));
  }
  const absl::Time done = outcome.completed_at == absl::InfinitePast()
                              ? plan_.now : outcome.completed_at;
  if (done < plan_.now || done == absl::InfiniteFuture()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "completed_at (", absl::FormatTime(done), ") is before the plan's now (",
        absl::FormatTime(plan_.now), ") or infinite; nothing was applied"));
  }
  if (outcome.sequences.size() != plan_.sequences.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "outcome has ", outcome.sequences.size(), " sequences but step ",
        plan_.step, " planned ", plan_.sequences.size(),
        "; report exactly one per planned sequence, in plan order"));
  }
  for (const ModelLoadFailure& f : outcome.failed_loads) {
    const bool planned = std::any_of(
        plan_.model_commands.begin(), plan_.model_commands.end(), [&](const ModelCommand& c) {
          return c.kind == ModelCommandKind::kLoad && c.model == f.model;
        });
    if (!planned) {
      return absl::InvalidArgumentError(absl::StrCat(
          "failed_loads names model ", f.model.ToString(), ", which step ", plan_.step,
          " did not ask to load; nothing was applied"));
    }
  }
  for (size_t i = 0; i < outcome.sequences.size(); ++i) {
    const SequenceOutcome& o = outcome.sequences[i];
    const ScheduledSequence& s = plan_.sequences[i];
    if (o.id != s.id) {
      return Mismatch(plan_.step, i, absl::StrCat("id ", o.id.ToString(), " where the plan has ", s.id.ToString(),
                                                  " (outcomes must follow plan order)"));
    }
    if (!o.error.empty()) continue;
    if (o.produced_token != s.sample) {
      return Mismatch(plan_.step, i, s.sample ? "the plan asked for a sampled token but none was produced"
                                              : "a token was produced where the plan did not sample");
    }
    if (o.finish == FinishReason::kLength) {
      return Mismatch(plan_.step, i, "finish kLength is decided by the scheduler; report kNone");
    }
    if (o.finish != FinishReason::kNone && !o.produced_token) {
      return Mismatch(plan_.step, i, "a finish reason needs a produced token");
    }
    if (o.produced_token) {
      const int32_t vocab = vocab_size_[s.model.value()];
      if (o.token < 0 || (vocab > 0 && o.token >= vocab)) {
        return Mismatch(plan_.step, i, absl::StrCat("token ", o.token, " is outside [0, ",
                                                    vocab > 0 ? vocab : INT32_MAX, ")"));
      }
    }
  }

  served_.clear();
  for (size_t i = 0; i < outcome.sequences.size(); ++i) {
    const SequenceOutcome& o = outcome.sequences[i];
    const ScheduledSequence& s = plan_.sequences[i];
    if (i + kRecordPrefetch < plan_slots_.size()) {
      PrefetchRecord(slab_[plan_slots_[i + kRecordPrefetch]], 2);
    }
    RequestRecord& r = slab_[plan_slots_[i]];
    if (!o.error.empty()) {
      RetryOrFail(r, o.error, done);
      continue;
    }
    served_.push_back({r.id, r.user, r.work_class, s.decode ? 0 : s.num_tokens, s.decode ? 1 : 0});
    r.computed = s.start_position + s.num_tokens;
    if (o.produced_token) {
      ++r.output_tokens;
      if (r.has_token_ids) r.tokens.push_back(o.token);
      if (r.first_token_time == absl::InfiniteFuture()) {
        r.first_token_time = done;
        Emit(RequestEventKind::kFirstToken, r, done);
      }
      const int32_t context = context_length_[r.model.value()];
      FinishReason reason = o.finish;
      if (reason == FinishReason::kNone &&
          (r.output_tokens >= r.max_new_tokens || r.length() >= context)) {
        reason = FinishReason::kLength;
      }
      if (reason != FinishReason::kNone) {
        Terminate(r, RequestPhase::kFinished, reason, "", done);
        continue;
      }
    }
    if (r.has_token_ids) RegisterFullBlocks(r);
    if (r.list == RunList::kPrefilling && r.decoding()) MoveToDecoding(r);
  }
  if (!plan_.model_commands.empty()) FinishModelLoads(outcome, done);
  // Swap-ins of this step have been copied: their host blocks are free now.
  for (BlockId host : host_release_after_step_) (void)allocator_.ReleaseHost(host);
  host_release_after_step_.clear();

  policy_->OnServed(served_, done);
  if (sink_ != nullptr) sink_->OnStep(plan_, outcome);
  last_now_ = std::max(last_now_, done);
  plan_outstanding_ = false;
  return absl::OkStatus();
}

void Scheduler::Impl::FinishModelLoads(const StepOutcome& outcome, absl::Time now) {
  failed_models_.clear();
  for (const ModelLoadFailure& f : outcome.failed_loads) failed_models_.push_back(f.model);
  residency_.FinishLoads(plan_.model_commands, failed_models_, &loaded_);
  PromotePrepared(now);
  for (const ModelLoadFailure& f : outcome.failed_loads) {
    // Everyone waiting for the model ends, with the engine's reason; a later
    // request for it asks for a new load.
    auto& waiting = preparing_[f.model.value()];
    for (const auto& [slot, id] : waiting) {
      RequestRecord& r = slab_[slot];
      if (r.id != id || r.phase != RequestPhase::kPreparing) continue;
      Terminate(r, RequestPhase::kFailed, FinishReason::kNone,
                absl::StrCat("model \"", options_.models[f.model.value()].name,
                             "\" failed to load: ", f.error),
                now);
    }
    waiting.clear();
  }
}

void Scheduler::Impl::RetryOrFail(RequestRecord& r, const std::string& error,
                                  absl::Time now) {
  const WorkClassConfig& c = options_.work_classes[r.work_class.value()];
  if (r.retries >= c.max_retries) {
    Terminate(r, RequestPhase::kFailed, FinishReason::kNone,
              r.retries == 0
                  ? absl::StrCat("the engine failed the sequence: ", error)
                  : absl::StrCat("the engine failed the sequence ", r.retries + 1,
                                 " times (class \"", c.name, "\" retries ", c.max_retries,
                                 "); last error: ", error),
              now);
    return;
  }
  // Retry from scratch: whatever the engine holds for it may be bad, so its
  // KV is dropped and recomputed (prompt plus the tokens already accepted).
  ++r.retries;
  RemoveFromList(r);
  if (DropDeviceState(r)) pending_drops_.push_back(r.id);
  r.computed = 0;
  // The next plan lists the drop; readmission waits a step more, so a plan
  // never both drops and schedules the same request.
  r.preempted_step = plan_.step + 1;
  r.phase = RequestPhase::kWaiting;
  ++num_waiting_;
  policy_->OnPreempted(r.View(), now);
  Emit(RequestEventKind::kRetry, r, now);
}

void Scheduler::Impl::RegisterFullBlocks(RequestRecord& r) {
  if (!prefix_cache_.has_value() || !r.has_token_ids) return;
  const int32_t full = std::min<int32_t>(r.computed / block_size_,
                                         static_cast<int32_t>(r.device_blocks.size()));
  if (r.registered_blocks >= full) return;
  HashFullBlocks(r, static_cast<size_t>(full));
  while (r.registered_blocks < full) {
    const auto b = static_cast<size_t>(r.registered_blocks);
    // False when another block already holds this prefix: keep ours private.
    (void)prefix_cache_->Insert(r.block_hashes[b], r.device_blocks[b]);
    ++r.registered_blocks;
  }
}

}  // namespace hearth

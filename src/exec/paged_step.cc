// Shared start and end of a paged executor's step (see paged_step.h).

#include "exec/paged_step.h"

#include "hearth/exec/step_outcome_fill.h"

namespace hearth::exec_internal {

absl::StatusOr<std::vector<PreparedSequence>> BeginPagedStep(
    const StepPlan& plan, SequenceTables& tables, BlockCopier copy,
    StepOutcome* outcome) {
  StartStepOutcome(plan, outcome);
  absl::Status s = tables.ValidateCopies(plan);
  if (!s.ok()) return s;
  tables.DropEnded(plan);
  s = copy(plan.swap_out, CopyKind::kSwapOut);
  if (s.ok()) s = copy(plan.swap_in, CopyKind::kSwapIn);
  if (s.ok()) s = copy(plan.copy_on_write, CopyKind::kCopyOnWrite);
  if (!s.ok()) return s;
  return tables.PrepareSequences(plan);
}

void FillPagedOutcome(const StepPlan& plan,
                      const std::vector<PreparedSequence>& prepared,
                      SequenceTables& tables, SampledToken sampled_token,
                      TokenId stop_token, StepOutcome* outcome) {
  int32_t sample = 0;
  for (size_t i = 0; i < prepared.size(); ++i) {
    const ScheduledSequence& s = plan.sequences[i];
    SequenceOutcome& o = outcome->sequences.emplace_back();
    o.id = s.id;
    if (!prepared[i].error.empty()) {
      o.error = prepared[i].error;
      continue;
    }
    tables.Advance(s.id, s.start_position + s.num_tokens);
    if (!s.sample) continue;
    const TokenId token = sampled_token(sample++);
    RecordSampledToken(token, IsStopToken(token, stop_token), o);
    tables.NoteSampled(s.id, token);
  }
}

}  // namespace hearth::exec_internal

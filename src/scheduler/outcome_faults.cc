#include "scheduler/outcome_faults.h"

#include <climits>

#include "absl/strings/str_cat.h"

namespace hearth::internal {

absl::Status OutcomeMismatch(uint64_t step, size_t i, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("outcome of step ", step, ", sequence ", i, ": ",
                                                 what, "; nothing was applied"));
}

absl::Status DescribeFault(const StepPlan& plan, size_t i, OutcomeFault fault,
                           const SequenceOutcome& o, const int32_t* vocab_size) {
  const uint64_t step = plan.step;
  const ScheduledSequence& s = plan.sequences[i];
  switch (fault) {
    case OutcomeFault::kNone:
      return absl::OkStatus();
    case OutcomeFault::kId:
      return OutcomeMismatch(step, i,
                             absl::StrCat("id ", o.id.ToString(), " where the plan has ",
                                          s.id.ToString(), " (outcomes must follow plan order)"));
    case OutcomeFault::kSampling:
      return OutcomeMismatch(step, i,
                             s.sample ? "the plan asked for a sampled token but none was produced"
                                      : "a token was produced where the plan did not sample");
    case OutcomeFault::kFinishLength:
      return OutcomeMismatch(step, i, "finish kLength is decided by the scheduler; report kNone");
    case OutcomeFault::kFinishUnknown:
      return OutcomeMismatch(step, i,
                             absl::StrCat("finish ", static_cast<int>(o.finish),
                                          " is not a FinishReason; report kNone, "
                                          "kStopToken or kStopString"));
    case OutcomeFault::kFinishWithoutToken:
      return OutcomeMismatch(step, i, "a finish reason needs a produced token");
    case OutcomeFault::kDrafts:
      return OutcomeMismatch(
          step, i,
          absl::StrCat("accepted_drafts is ", o.accepted_drafts, "; the plan gave this sequence ",
                       int32_t{s.draft_tokens}, " draft tokens, so it must be in [0, ",
                       int32_t{s.draft_tokens},
                       "], with a token produced, and 0 for a sequence that failed or ran out of "
                       "KV"));
    case OutcomeFault::kTokenRange: {
      const int32_t vocab = vocab_size[s.model.value()];
      return OutcomeMismatch(
          step, i,
          absl::StrCat("token ", o.token, " is outside [0, ", vocab > 0 ? vocab : INT32_MAX, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace hearth::internal

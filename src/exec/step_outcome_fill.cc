// The one way an engine fills a StepOutcome (see step_outcome_fill.h).

#include "hearth/exec/step_outcome_fill.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hearth {

void StartStepOutcome(const StepPlan& plan, StepOutcome* outcome) {
  outcome->step = plan.step;
  outcome->completed_at = absl::InfinitePast();
  outcome->sequences.clear();
  outcome->draft_ids.clear();
  outcome->failed_loads.clear();
  outcome->embeddings.clear();
  outcome->embedding_width = 0;
}

absl::Status ValidateStopToken(TokenId stop_token, int32_t vocab_size) {
  if (stop_token < vocab_size) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "stop_token = %d is invalid: must be < 0 (none) or in [0, %d)", stop_token, vocab_size));
}

bool IsStopToken(TokenId token, TokenId stop_token) {
  return stop_token >= 0 && token == stop_token;
}

void RecordSampledToken(TokenId token, bool ends_request, SequenceOutcome& o) {
  o.produced_token = true;
  o.token = token;
  o.finish = ends_request ? FinishReason::kStopToken : FinishReason::kNone;
}

void RecordEmbedding(absl::Span<const float> vector, StepOutcome& outcome) {
  float norm = 0.0f;
  for (float v : vector) norm += v * v;
  norm = std::sqrt(norm);
  for (float v : vector) outcome.embeddings.push_back(norm > 0.0f ? v / norm : v);
}

void FailWholeStep(const StepPlan& plan, const absl::Status& why,
                   StepOutcome* outcome) {
  // failed_loads stay: a load the engine reported as failed before the step
  // failed did not happen either.
  outcome->step = plan.step;
  outcome->completed_at = absl::InfinitePast();
  outcome->sequences.clear();
  outcome->embeddings.clear();
  for (const ScheduledSequence& s : plan.sequences) {
    SequenceOutcome& o = outcome->sequences.emplace_back();
    o.id = s.id;
    o.error = absl::StrCat("step failed: ", why.message());
  }
}

}  // namespace hearth

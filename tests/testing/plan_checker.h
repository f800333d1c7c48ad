// File: tests/testing/plan_checker.h
//
// Checks a StepPlan from the outside, against the options and what the
// previous step left running: budgets, caps, block tables that cover the
// scheduled positions, that no decoding sequence is skipped unless it was
// preempted or released, that decodes come first, and that an embedding
// never samples and a mean-pooled one computes every position in order, and
// multimodal prompts' encoder work (a chunk never ends inside a span, every
// span a chunk computes is listed with an entry the engine holds or
// encodes, within the encoder's budget and cache). Used after every Plan()
// in the randomized drivers.

#ifndef HEARTH_TESTS_TESTING_PLAN_CHECKER_H_
#define HEARTH_TESTS_TESTING_PLAN_CHECKER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "hearth/scheduler/scheduler.h"

namespace hearth::testing {

class PlanChecker {
 public:
  explicit PlanChecker(const SchedulerOptions& options) : options_(options) {}

  // Call right after Plan(). `excused`: requests that may skip a decode
  // without being dropped (overlapped planning: ones the step in flight
  // ends by their limits, or whose drafts are in flight).
  absl::Status CheckPlan(const StepPlan& plan,
                         const absl::flat_hash_set<RequestId>& excused = {});
  // Call right after a successful Complete() of `plan`; its voided entries
  // say nothing.
  void AfterComplete(const StepPlan& plan, const StepOutcome& outcome);
  // A request's encoder spans (RequestSpec::encoder_spans), for the span rules.
  void RegisterSpans(RequestId id, std::vector<EncoderSpan> spans) {
    if (!spans.empty()) spans_[id] = std::move(spans);
  }

 private:
  const SchedulerOptions& options_;
  // Requests that decoded last step and did not end: each must decode again,
  // be preempted, or be released.
  absl::flat_hash_set<RequestId> decoding_;
  // Engine-side block tables reconstructed from full tables and appends.
  absl::flat_hash_map<RequestId, std::vector<BlockId>> tables_;
  absl::flat_hash_set<RequestId> ended_;
  // Mean-pooled embeddings: where the engine's running sum ends (the last
  // planned chunk's end), since the engine state that holds it was made.
  absl::flat_hash_map<RequestId, int32_t> mean_sum_end_;
  absl::flat_hash_map<RequestId, std::vector<EncoderSpan>> spans_;
  // Encoder cache entries the engine holds, with their lengths.
  absl::flat_hash_map<int32_t, int32_t> entries_;
  // The encoder checks of CheckPlan.
  absl::Status CheckEncoder(const StepPlan& plan);
};

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_TESTING_PLAN_CHECKER_H_

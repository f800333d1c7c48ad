// File: src/scheduler/encoder_planner.h
//
// EncoderPlanner: the encoder's part of a step. A multimodal prompt's spans
// (RequestSpec::encoder_spans) are computed whole within one chunk, from
// an encoder output the plan either reuses from the EncoderCache or
// encodes this step under the per-step budget
// (SchedulerOptions::max_encoder_tokens_per_step). The planner cuts each
// prefill chunk so that it never ends inside a span and never reads more
// than the budget and the cache allow (CutChunk), then lists the spans the
// chunk reads (Emit: StepPlan::encoder_inputs, with the cache's evictions
// in encoder_frees).
//
// Requests without spans never reach it. Internal to the scheduler; engine
// thread only; nothing allocates per step (the plan's lists are reserved).

#ifndef HEARTH_SRC_SCHEDULER_ENCODER_PLANNER_H_
#define HEARTH_SRC_SCHEDULER_ENCODER_PLANNER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "hearth/scheduler/step_plan.h"
#include "scheduler/encoder_cache.h"

namespace hearth::internal {

// A request's span as the scheduler keeps it: where it is, and the key of
// its encoder output (EncoderCacheKey), resolved once at Submit.
struct SpanRecord {
  int32_t position = 0;
  int32_t length = 0;
  uint64_t key = 0;
  int32_t end() const { return position + length; }
};

class EncoderPlanner {
 public:
  EncoderPlanner(int32_t budget_per_step, int32_t cache_tokens);

  // A new plan: the budget refills, and entries dropped since the last
  // plan are listed in its encoder_frees.
  void StartStep(StepPlan* plan);

  // The first chunk end after `start` that splits no span: the end of the
  // span `start` lies in (or starts), else start + 1.
  static int32_t MinEnd(absl::Span<const SpanRecord> spans, int32_t start);
  // The largest end in (start, end] that splits no span and whose spans
  // fit this step's encoder budget and the cache; a chunk starting in or at
  // a span may reach past `end` to that span's end when it is within
  // `stretch_end`. `start` when no such end exists (the chunk waits); then
  // `*blocked` (when given) is the length of the span it waits at.
  int32_t CutChunk(absl::Span<const SpanRecord> spans, int32_t start, int32_t end,
                   int32_t stretch_end, int32_t* blocked = nullptr) const;

  // Progress. A span is computed whole, so under a tight step budget (a TPOT
  // target keeps steps to the decodes and a block) or beside other photos
  // a chunk could wait at one forever. The first request found waiting at
  // a span becomes the waiter: the next steps are sized to fit its span
  // beside the decodes (TokenBudget floor), and the planner visits it
  // first among prefills and admissions, before anyone else takes the
  // step's tokens or encoder budget, until a chunk of it is planned or it
  // leaves.
  void NoteBlocked(RequestId id, int32_t span_tokens) {
    if (!waiter_.valid()) {
      waiter_ = id;
      waiter_tokens_ = span_tokens;
    }
  }
  RequestId waiter() const { return waiter_; }
  int32_t waiter_tokens() const { return waiter_.valid() ? waiter_tokens_ : 0; }
  void ClearWaiter() { waiter_ = RequestId(); }
  // Lists every span the chunk [start, end) (cut by CutChunk) reads in
  // plan->encoder_inputs, storing and encoding the outputs not cached.
  void Emit(absl::Span<const SpanRecord> spans, RequestId id, uint64_t handle, int32_t start,
            int32_t end, StepPlan* plan);
  // The engine failed `id` (whose spans are `spans`) in the step of
  // `plan`: the outputs that step encoded or read for it are not trusted
  // again (freed in the next plan, encoded anew when next needed), unless a
  // later plan already replaced them. A read fails too when an encode the
  // engine could not do went unreported (its sequence was voided).
  void DropEncodedBy(absl::Span<const SpanRecord> spans, RequestId id, const StepPlan& plan);

  const EncoderCache& cache() const { return cache_; }

 private:
  // Spans overlapping [start, ...): index of the first.
  static size_t FirstFrom(absl::Span<const SpanRecord> spans, int32_t start);

  const int32_t budget_per_step_;
  int32_t budget_left_ = 0;
  uint64_t step_ = 0;
  EncoderCache cache_;
  std::vector<int32_t> dropped_;
  RequestId waiter_;
  int32_t waiter_tokens_ = 0;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_ENCODER_PLANNER_H_

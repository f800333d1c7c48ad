#include "scheduler/encoder_planner.h"

#include <algorithm>

namespace hearth::internal {

EncoderPlanner::EncoderPlanner(int32_t budget_per_step, int32_t cache_tokens)
    : budget_per_step_(budget_per_step), cache_(cache_tokens) {
  dropped_.reserve(64);
}

void EncoderPlanner::StartStep(StepPlan* plan) {
  step_ = plan->step;
  budget_left_ = budget_per_step_;
  plan->encoder_frees.insert(plan->encoder_frees.end(), dropped_.begin(), dropped_.end());
  dropped_.clear();
}

size_t EncoderPlanner::FirstFrom(absl::Span<const SpanRecord> spans, int32_t start) {
  // Sorted and disjoint, so their ends are sorted too.
  return static_cast<size_t>(
      std::upper_bound(spans.begin(), spans.end(), start,
                       [](int32_t p, const SpanRecord& s) { return p < s.end(); }) -
      spans.begin());
}

int32_t EncoderPlanner::MinEnd(absl::Span<const SpanRecord> spans, int32_t start) {
  const size_t i = FirstFrom(spans, start);
  return i < spans.size() && spans[i].position <= start ? spans[i].end() : start + 1;
}

int32_t EncoderPlanner::CutChunk(absl::Span<const SpanRecord> spans, int32_t start, int32_t end,
                                 int32_t stretch_end, int32_t* blocked) const {
  const auto wait = [&](const SpanRecord& s) {
    if (blocked != nullptr) *blocked = s.length;
    return start;
  };
  int32_t budget = budget_left_;
  int32_t room = cache_.Available(step_);
  int32_t cut = end;
  const size_t first = FirstFrom(spans, start);
  for (size_t i = first; i < spans.size(); ++i) {
    const SpanRecord& s = spans[i];
    if (s.position >= cut) break;
    // Where the chunk must end if this span cannot be read: before it, or
    // nowhere when the chunk starts inside it.
    const int32_t before = std::max(start, s.position);
    if (s.end() > cut) {
      if (s.position > start) return s.position;
      if (s.end() > stretch_end) return wait(s);
      cut = s.end();
    }
    const int32_t entry = cache_.Find(s.key);
    bool stored_here = false;
    for (size_t j = first; j < i && !stored_here; ++j) {
      stored_here = spans[j].key == s.key;
    }
    if (stored_here) continue;
    if (entry >= 0) {
      // Read this step, it is pinned and no longer room for others; with
      // the outputs this chunk encodes it must fit the cache at once.
      if (!cache_.Pinned(entry, step_)) room -= cache_.tokens_of(entry);
      if (room < 0) return before > start ? before : wait(s);
      continue;
    }
    if (s.length > budget || s.length > room) return before > start ? before : wait(s);
    budget -= s.length;
    room -= s.length;
  }
  return cut;
}

void EncoderPlanner::Emit(absl::Span<const SpanRecord> spans, RequestId id, uint64_t handle,
                          int32_t start, int32_t end, StepPlan* plan) {
  if (id == waiter_) ClearWaiter();
  // Pin what is cached before storing anything, so that no store evicts an
  // output this chunk reads (CutChunk counted the room that way).
  const size_t first = FirstFrom(spans, start);
  for (size_t i = first; i < spans.size() && spans[i].position < end; ++i) {
    const int32_t entry = cache_.Find(spans[i].key);
    if (entry >= 0) cache_.Touch(entry, step_);
  }
  for (size_t i = first; i < spans.size() && spans[i].position < end; ++i) {
    const SpanRecord& s = spans[i];
    EncoderInput& in = plan->encoder_inputs.emplace_back();
    in.id = id;
    in.handle = handle;
    in.span_index = static_cast<int32_t>(i);
    in.position = s.position;
    in.length = s.length;
    in.entry = cache_.Find(s.key);
    in.encode = in.entry < 0;
    if (in.encode) {
      in.entry = cache_.Store(s.key, s.length, step_, &plan->encoder_frees);
      budget_left_ -= s.length;
      plan->num_encoder_tokens += s.length;
    }
  }
}

void EncoderPlanner::DropEncodedBy(absl::Span<const SpanRecord> spans, RequestId id,
                                   const StepPlan& plan) {
  for (const EncoderInput& in : plan.encoder_inputs) {
    if (in.id != id || static_cast<size_t>(in.span_index) >= spans.size()) continue;
    if (cache_.Find(spans[static_cast<size_t>(in.span_index)].key) == in.entry) {
      cache_.Drop(in.entry, &dropped_);
    }
  }
}

}  // namespace hearth::internal

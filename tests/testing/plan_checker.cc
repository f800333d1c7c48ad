#include "tests/testing/plan_checker.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/options_validation.h"

namespace hearth::testing {

absl::Status PlanChecker::CheckPlan(const StepPlan& plan,
                                    const absl::flat_hash_set<RequestId>& excused) {
  auto fail = [&](auto&&... parts) {
    return absl::InternalError(absl::StrCat("step ", plan.step, ": ", parts...));
  };
  if (plan.num_batched_tokens > options_.max_batched_tokens) {
    return fail(plan.num_batched_tokens, " batched tokens exceed ", options_.max_batched_tokens);
  }
  if (static_cast<int32_t>(plan.sequences.size()) > options_.max_running) {
    return fail(plan.sequences.size(), " sequences exceed max_running ", options_.max_running);
  }
  int32_t loads = 0;
  for (const ModelCommand& c : plan.model_commands) loads += c.kind == ModelCommandKind::kLoad;
  if (loads > options_.residency.max_concurrent_loads) {
    return fail(loads, " model loads exceed max_concurrent_loads ", options_.residency.max_concurrent_loads);
  }
  absl::flat_hash_set<RequestId> dropped;
  for (const Preemption& p : plan.preempted) {
    dropped.insert(p.id);
    tables_.erase(p.id);
    mean_sum_end_.erase(p.id);
  }
  for (const ReleasedSequence& r : plan.released) {
    dropped.insert(r.id);
    tables_.erase(r.id);
    mean_sum_end_.erase(r.id);
  }
  int32_t tokens = 0;
  absl::flat_hash_set<RequestId> seen;
  const int32_t bs = options_.kv.block_size;
  for (const ScheduledSequence& s : plan.sequences) {
    if (!seen.insert(s.id).second) return fail("request ", s.id.ToString(), " scheduled twice");
    if (dropped.contains(s.id)) {
      return fail("request ", s.id.ToString(), " scheduled and preempted/released in one step");
    }
    if (s.num_tokens < 1) return fail("request ", s.id.ToString(), " scheduled with ", s.num_tokens, " tokens");
    if (s.input_pending && (!options_.overlap_planning || !s.decode || !s.token_ids.empty())) {
      return fail("request ", s.id.ToString(), " has a pending input outside an overlapped decode");
    }
    if (s.draft_tokens < 0 || s.draft_tokens > options_.max_draft_tokens ||
        (s.draft_tokens > 0 && !s.decode)) {
      return fail("request ", s.id.ToString(), " has ", s.draft_tokens, " draft tokens (max ",
                  options_.max_draft_tokens, ", decodes only)");
    }
    if (s.embed && (s.sample || s.decode || s.draft_tokens > 0 || s.input_pending)) {
      return fail("embedding ", s.id.ToString(), " is planned to sample or decode");
    }
    if (!s.embed && (s.pool || s.mean_pool)) {
      return fail("generation ", s.id.ToString(), " carries an embedding's pooling flags");
    }
    if (s.mean_pool) {
      // The engine's sum covers [0, end) of this stay on the device: a
      // chunk that does not continue it would leave positions out.
      auto sum = mean_sum_end_.find(s.id);
      const bool continues = sum != mean_sum_end_.end() && sum->second == s.start_position;
      if (s.start_position != 0 && (!continues || s.full_block_table)) {
        return fail("mean-pooled embedding ", s.id.ToString(), " starts at position ",
                    s.start_position, " but the engine's sum ends at ",
                    sum == mean_sum_end_.end() ? 0 : sum->second);
      }
      mean_sum_end_[s.id] = s.start_position + s.num_tokens;
    }
    tokens += s.num_tokens + s.draft_tokens;
    std::vector<BlockId>& table = tables_[s.id];
    if (s.full_block_table) {
      table.assign(s.block_table.begin(), s.block_table.end());
    } else {
      table.insert(table.end(), s.new_blocks.begin(), s.new_blocks.end());
    }
    if (table.size() != s.block_table.size() ||
        !std::equal(table.begin(), table.end(), s.block_table.begin())) {
      return fail("request ", s.id.ToString(), ": appended blocks do not rebuild the block table");
    }
    if (static_cast<int64_t>(table.size()) * bs < s.start_position + s.num_tokens + s.draft_tokens) {
      return fail("request ", s.id.ToString(), " runs to position ",
                  s.start_position + s.num_tokens + s.draft_tokens,
                  " but its ", table.size(), " blocks hold ", table.size() * bs);
    }
  }
  if (tokens != plan.num_batched_tokens) {
    return fail("num_batched_tokens ", plan.num_batched_tokens, " != sum ", tokens);
  }
  if (absl::Status e = CheckEncoder(plan); !e.ok()) return e;
  // StepPlan promises decodes first, also after preemptions removed entries:
  // no sequence that decoded last step (and so decodes now) comes after a
  // prefill chunk. (A one-token sampled entry may be a decode too, e.g. after
  // a recompute, so only longer or unsampled chunks count as prefills here.)
  bool prefill_seen = false;
  for (const ScheduledSequence& s : plan.sequences) {
    if (prefill_seen && decoding_.contains(s.id)) {
      return fail("decode of request ", s.id.ToString(), " listed after a prefill");
    }
    prefill_seen = prefill_seen || s.num_tokens > 1 || !s.sample;
  }
  for (RequestId id : decoding_) {
    if (!seen.contains(id) && !dropped.contains(id) && !excused.contains(id)) {
      return fail("decoding request ", id.ToString(), " was skipped without preemption");
    }
  }
  return absl::OkStatus();
}

absl::Status PlanChecker::CheckEncoder(const StepPlan& plan) {
  auto fail = [&](auto&&... parts) {
    return absl::InternalError(absl::StrCat("step ", plan.step, ": ", parts...));
  };
  for (const int32_t e : plan.encoder_frees) {
    if (entries_.erase(e) == 0) return fail("encoder entry ", e, " freed but not held");
  }
  int32_t encoded = 0;
  for (const EncoderInput& in : plan.encoder_inputs) {
    if (in.encode) {
      if (!entries_.emplace(in.entry, in.length).second) {
        return fail("encoder entry ", in.entry, " encoded while it holds an output");
      }
      encoded += in.length;
    } else {
      const auto it = entries_.find(in.entry);
      if (it == entries_.end() || it->second != in.length) {
        return fail("request ", in.id.ToString(), " reads encoder entry ", in.entry,
                    ", which holds no output of length ", in.length);
      }
    }
  }
  const int32_t budget = internal::EncoderBudgetPerStep(options_);
  const int32_t cache = internal::EncoderCacheTokens(options_);
  if (encoded != plan.num_encoder_tokens || encoded > budget) {
    return fail("encodes ", encoded, " positions (num_encoder_tokens ", plan.num_encoder_tokens,
                ", budget ", budget, ")");
  }
  int64_t held = 0;
  for (const auto& [e, len] : entries_) held += len;
  if (held > cache) return fail("encoder entries hold ", held, " positions, cache ", cache);
  for (const ScheduledSequence& s : plan.sequences) {
    const auto it = spans_.find(s.id);
    if (it == spans_.end()) continue;
    const int32_t end = s.start_position + s.num_tokens;
    for (size_t i = 0; i < it->second.size(); ++i) {
      const EncoderSpan& e = it->second[i];
      if (e.position >= end || e.position + e.length <= s.start_position) continue;
      if (e.position + e.length > end) {
        return fail("request ", s.id.ToString(), "'s chunk [", s.start_position, ", ", end,
                    ") ends inside encoder span ", i, " [", e.position, ", ",
                    e.position + e.length, ")");
      }
      const bool listed = std::any_of(
          plan.encoder_inputs.begin(), plan.encoder_inputs.end(), [&](const EncoderInput& in) {
            return in.id == s.id && in.span_index == static_cast<int32_t>(i) &&
                   in.position == e.position && in.length == e.length;
          });
      if (!listed) {
        return fail("request ", s.id.ToString(), " computes encoder span ", i,
                    " without an encoder input");
      }
    }
  }
  return absl::OkStatus();
}

void PlanChecker::AfterComplete(const StepPlan& plan, const StepOutcome& outcome) {
  decoding_.clear();
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    const SequenceOutcome& o = outcome.sequences[i];
    if (IsVoided(plan, o.id)) continue;
    // A request that produced a token and did not stop decodes next; whether
    // the scheduler ended it for length is known from the next plan's
    // `released`, which CheckPlan accepts.
    if (o.error.empty() && o.produced_token && o.finish == FinishReason::kNone) {
      decoding_.insert(o.id);
    }
  }
}

}  // namespace hearth::testing

// hearth_outcome_*: the engine's report of a plan, and
// hearth_scheduler_complete, which applies it.

#include <cstring>
#include <memory>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "capi/c_handles.h"
#include "capi/c_status.h"
#include "capi/c_time.h"

using hearth::capi::Fail;
using hearth::capi::FromStatus;
using hearth::capi::Guard;

namespace {

// An engine's error message is kept in the request's result; beyond this
// it is truncated, so that a runaway message cannot grow every result.
constexpr size_t kMaxMessageBytes = 4096;

std::string BoundedMessage(const char* message) {
  if (message == nullptr) return "engine failure (no message)";
  std::string text(message, strnlen(message, kMaxMessageBytes));
  // An empty error would read as success to the scheduler.
  return text.empty() ? "engine failure (no message)" : text;
}

hearth_status RequireBegun(const hearth_outcome& o, const char* function,
                           hearth_error** error) {
  if (o.begun) return HEARTH_OK;
  return Fail(error, HEARTH_FAILED_PRECONDITION,
              absl::StrCat(function, ": call hearth_outcome_begin first"));
}

}  // namespace

extern "C" {

hearth_status hearth_outcome_new(hearth_outcome** out, hearth_error** error) {
  return Guard(error, "hearth_outcome_new", [&] {
    HEARTH_C_REQUIRE(out, "hearth_outcome_new", error);
    *out = new hearth_outcome;
    return HEARTH_OK;
  });
}

void hearth_outcome_free(hearth_outcome* outcome) { delete outcome; }

hearth_status hearth_outcome_begin(hearth_outcome* outcome,
                                   const hearth_plan* plan,
                                   hearth_error** error) {
  return Guard(error, "hearth_outcome_begin", [&] {
    HEARTH_C_REQUIRE(outcome, "hearth_outcome_begin", error);
    HEARTH_C_REQUIRE(plan, "hearth_outcome_begin", error);
    if (plan->plan == nullptr) {
      return Fail(error, HEARTH_FAILED_PRECONDITION,
                  "hearth_outcome_begin: the plan was already completed");
    }
    hearth::StepOutcome& o = outcome->outcome;
    o.step = plan->plan->step;
    o.completed_at = absl::InfinitePast();
    o.sequences.clear();  // keeps capacity: steady steps allocate nothing
    o.draft_ids.clear();
    o.failed_loads.clear();
    o.sequences.reserve(plan->plan->sequences.size());
    outcome->view = plan;
    outcome->begun = true;
    return HEARTH_OK;
  });
}

hearth_status hearth_outcome_set_completed_at(hearth_outcome* outcome,
                                              double completed_at_s,
                                              hearth_error** error) {
  return Guard(error, "hearth_outcome_set_completed_at", [&] {
    HEARTH_C_REQUIRE(outcome, "hearth_outcome_set_completed_at", error);
    absl::StatusOr<absl::Time> at = hearth::capi::TimeFromSeconds(
        completed_at_s, "hearth_outcome_set_completed_at: completed_at_s",
        hearth::capi::Infinity::kNone);
    if (!at.ok()) return FromStatus(at.status(), error);
    outcome->outcome.completed_at = *at;
    return HEARTH_OK;
  });
}

hearth_status hearth_outcome_add(hearth_outcome* outcome, uint64_t id,
                                 int32_t produced_token, int32_t token,
                                 hearth_finish_reason finish,
                                 hearth_error** error) {
  return Guard(error, "hearth_outcome_add", [&] {
    HEARTH_C_REQUIRE(outcome, "hearth_outcome_add", error);
    if (hearth_status s = RequireBegun(*outcome, "hearth_outcome_add", error)) return s;
    const int raw = hearth::capi::RawEnum(finish);
    if (raw != HEARTH_FINISH_NONE && raw != HEARTH_FINISH_STOP_TOKEN &&
        raw != HEARTH_FINISH_STOP_STRING) {
      return Fail(error, HEARTH_INVALID_ARGUMENT,
                  absl::StrCat("hearth_outcome_add: finish ", raw,
                               " must be NONE, STOP_TOKEN or STOP_STRING (LENGTH "
                               "is the scheduler's to decide)"));
    }
    hearth::SequenceOutcome& s = outcome->outcome.sequences.emplace_back();
    s.id = hearth::RequestId(id);
    s.produced_token = produced_token != 0;
    s.token = token;
    s.finish = static_cast<hearth::FinishReason>(raw);
    return HEARTH_OK;
  });
}

hearth_status hearth_outcome_add_arrays(hearth_outcome* outcome, size_t count,
                                        const uint64_t* ids, const uint8_t* produced,
                                        const int32_t* tokens, const uint8_t* finish,
                                        hearth_error** error) {
  return Guard(error, "hearth_outcome_add_arrays", [&] {
    HEARTH_C_REQUIRE(outcome, "hearth_outcome_add_arrays", error);
    if (hearth_status s = RequireBegun(*outcome, "hearth_outcome_add_arrays", error)) return s;
    std::vector<hearth::SequenceOutcome>& entries = outcome->outcome.sequences;
    const hearth_plan* view = outcome->view;
    const hearth::StepPlan* plan = view != nullptr ? view->plan : nullptr;
    const size_t first = entries.size();
    if (ids == nullptr || produced == nullptr) {
      if (ids != nullptr) {
        return Fail(error, HEARTH_INVALID_ARGUMENT,
                    "hearth_outcome_add_arrays: produced may be NULL only with ids NULL "
                    "(entries then follow the plan's order)");
      }
      // Views are reused for later plans; the step tells whether this one
      // still shows the plan the outcome was begun for.
      if (plan == nullptr || plan->step != outcome->outcome.step) {
        return Fail(error, HEARTH_FAILED_PRECONDITION,
                    "hearth_outcome_add_arrays: ids NULL needs hearth_outcome_begin for a "
                    "plan still outstanding");
      }
      if (count > plan->sequences.size() - std::min(first, plan->sequences.size())) {
        return Fail(error, HEARTH_OUT_OF_RANGE,
                    absl::StrCat("hearth_outcome_add_arrays: ", count, " entries after ", first,
                                 " would pass the plan's ", plan->sequences.size(),
                                 " sequences"));
      }
    }
    // Only a missing tokens array or a finish array can be refused entry by
    // entry; the common call (tokens given, finish NULL) skips this pass.
    for (size_t k = 0; (tokens == nullptr || finish != nullptr) && k < count; ++k) {
      const bool made = produced != nullptr ? produced[k] != 0
                                            : plan->sequences[first + k].sample;
      if (made && tokens == nullptr) {
        return Fail(error, HEARTH_INVALID_ARGUMENT,
                    absl::StrCat("hearth_outcome_add_arrays: entry ", k,
                                 " produced a token but tokens is NULL"));
      }
      const int raw = finish == nullptr ? 0 : finish[k];  // 0: HEARTH_FINISH_NONE
      if (raw != HEARTH_FINISH_NONE && raw != HEARTH_FINISH_STOP_TOKEN &&
          raw != HEARTH_FINISH_STOP_STRING) {
        return Fail(error, HEARTH_INVALID_ARGUMENT,
                    absl::StrCat("hearth_outcome_add_arrays: finish[", k, "] is ", raw,
                                 "; must be NONE, STOP_TOKEN or STOP_STRING (LENGTH is the "
                                 "scheduler's to decide)"));
      }
    }
    entries.resize(first + count);  // constructs the new entries as defaults
    hearth::SequenceOutcome* const added = entries.data() + first;
    const hearth::ScheduledSequence* const planned =
        plan != nullptr && first < plan->sequences.size() ? plan->sequences.data() + first
                                                          : nullptr;
    for (size_t k = 0; k < count; ++k) {
      hearth::SequenceOutcome& s = added[k];
      s.id = ids != nullptr ? hearth::RequestId(ids[k]) : planned[k].id;
      s.produced_token = produced != nullptr ? produced[k] != 0 : planned[k].sample;
      s.token = s.produced_token ? tokens[k] : 0;
      s.finish = static_cast<hearth::FinishReason>(finish == nullptr ? 0 : finish[k]);
    }
    return HEARTH_OK;
  });
}

hearth_status hearth_outcome_add_speculative(hearth_outcome* outcome, uint64_t id,
                                             const int32_t* drafts, size_t accepted,
                                             int32_t token, hearth_finish_reason finish,
                                             hearth_error** error) {
  return Guard(error, "hearth_outcome_add_speculative", [&] {
    HEARTH_C_REQUIRE(outcome, "hearth_outcome_add_speculative", error);
    if (accepted > static_cast<size_t>(hearth::kMaxDraftTokens)) {
      return Fail(error, HEARTH_INVALID_ARGUMENT,
                  absl::StrCat("hearth_outcome_add_speculative: accepted is ", accepted,
                               "; a decode carries at most ", hearth::kMaxDraftTokens,
                               " drafts"));
    }
    if (drafts == nullptr && accepted > 0) {
      return Fail(error, HEARTH_INVALID_ARGUMENT,
                  "hearth_outcome_add_speculative: drafts is NULL but accepted is not 0");
    }
    if (hearth_status s = hearth_outcome_add(outcome, id, 1, token, finish, error)) return s;
    // Whether the count fits the plan's drafts is Complete's to judge.
    hearth::SequenceOutcome& o = outcome->outcome.sequences.back();
    o.accepted_drafts = static_cast<int32_t>(accepted);
    outcome->outcome.draft_ids.insert(outcome->outcome.draft_ids.end(), drafts,
                                      drafts + accepted);
    return HEARTH_OK;
  });
}

hearth_status hearth_outcome_add_failed(hearth_outcome* outcome, uint64_t id,
                                        const char* message,
                                        hearth_error** error) {
  return Guard(error, "hearth_outcome_add_failed", [&] {
    HEARTH_C_REQUIRE(outcome, "hearth_outcome_add_failed", error);
    if (hearth_status s = RequireBegun(*outcome, "hearth_outcome_add_failed", error)) {
      return s;
    }
    hearth::SequenceOutcome& s = outcome->outcome.sequences.emplace_back();
    s.id = hearth::RequestId(id);
    s.error = BoundedMessage(message);
    return HEARTH_OK;
  });
}

hearth_status hearth_outcome_add_out_of_kv(hearth_outcome* outcome, uint64_t id,
                                           hearth_error** error) {
  return Guard(error, "hearth_outcome_add_out_of_kv", [&] {
    HEARTH_C_REQUIRE(outcome, "hearth_outcome_add_out_of_kv", error);
    if (hearth_status s = RequireBegun(*outcome, "hearth_outcome_add_out_of_kv", error)) {
      return s;
    }
    hearth::SequenceOutcome& s = outcome->outcome.sequences.emplace_back();
    s.id = hearth::RequestId(id);
    s.out_of_kv = true;
    return HEARTH_OK;
  });
}

hearth_status hearth_outcome_add_failed_load(hearth_outcome* outcome,
                                             uint32_t model,
                                             const char* message,
                                             hearth_error** error) {
  return Guard(error, "hearth_outcome_add_failed_load", [&] {
    HEARTH_C_REQUIRE(outcome, "hearth_outcome_add_failed_load", error);
    if (hearth_status s =
            RequireBegun(*outcome, "hearth_outcome_add_failed_load", error)) {
      return s;
    }
    outcome->outcome.failed_loads.push_back(
        hearth::ModelLoadFailure{hearth::ModelId(model), BoundedMessage(message)});
    return HEARTH_OK;
  });
}

hearth_status hearth_outcome_fill_from_plan(hearth_outcome* outcome,
                                            const hearth_plan* plan,
                                            hearth_error** error) {
  if (hearth_status s = hearth_outcome_begin(outcome, plan, error)) return s;
  return Guard(error, "hearth_outcome_fill_from_plan", [&] {
    for (const hearth::ScheduledSequence& planned : plan->plan->sequences) {
      hearth::SequenceOutcome& s = outcome->outcome.sequences.emplace_back();
      s.id = planned.id;
      s.produced_token = planned.sample;
    }
    return HEARTH_OK;
  });
}

hearth_status hearth_scheduler_complete(hearth_scheduler* scheduler,
                                        const hearth_outcome* outcome,
                                        hearth_error** error) {
  return Guard(error, "hearth_scheduler_complete", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_complete", error);
    HEARTH_C_REQUIRE(outcome, "hearth_scheduler_complete", error);
    if (hearth_status s = RequireBegun(*outcome, "hearth_scheduler_complete", error)) {
      return s;
    }
    const hearth_status status =
        FromStatus(scheduler->scheduler->Complete(outcome->outcome), error);
    if (status == HEARTH_OK) {
      // The view's pointers die with the plan; a stale view reads as empty.
      for (hearth_plan& view : scheduler->plan_views) {
        if (view.plan != nullptr && view.plan->step == outcome->outcome.step) {
          view.plan = nullptr;
        }
      }
    }
    return status;
  });
}

}  // extern "C"

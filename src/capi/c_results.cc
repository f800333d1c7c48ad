// hearth_scheduler_drain and the results it hands over.

#include <memory>

#include "absl/strings/str_cat.h"
#include "capi/c_handles.h"
#include "capi/c_status.h"
#include "capi/c_time.h"

using hearth::capi::Fail;
using hearth::capi::Guard;
using hearth::capi::SecondsFromTime;

namespace {

// The C numbers are an ABI: a phase added in C++ takes the next C number
// (HELD is 10, after the terminal phases), whatever its C++ place.
hearth_phase CPhase(hearth::RequestPhase p) {
  switch (p) {
    case hearth::RequestPhase::kQueued: return HEARTH_PHASE_QUEUED;
    case hearth::RequestPhase::kPreparing: return HEARTH_PHASE_PREPARING;
    case hearth::RequestPhase::kWaiting: return HEARTH_PHASE_WAITING;
    case hearth::RequestPhase::kRunning: return HEARTH_PHASE_RUNNING;
    case hearth::RequestPhase::kSwapped: return HEARTH_PHASE_SWAPPED;
    case hearth::RequestPhase::kHeld: return HEARTH_PHASE_HELD;
    case hearth::RequestPhase::kFinished: return HEARTH_PHASE_FINISHED;
    case hearth::RequestPhase::kCancelled: return HEARTH_PHASE_CANCELLED;
    case hearth::RequestPhase::kRejected: return HEARTH_PHASE_REJECTED;
    case hearth::RequestPhase::kTimedOut: return HEARTH_PHASE_TIMED_OUT;
    case hearth::RequestPhase::kFailed: return HEARTH_PHASE_FAILED;
  }
  return HEARTH_PHASE_FAILED;
}
static_assert(HEARTH_FINISH_STOP_STRING ==
              static_cast<int>(hearth::FinishReason::kStopString));
static_assert(HEARTH_FINISH_LENGTH == static_cast<int>(hearth::FinishReason::kLength));
static_assert(HEARTH_FINISH_POOLED == static_cast<int>(hearth::FinishReason::kPooled));

const char* NameAt(const NameList& names, uint32_t index) {
  return index < names.size() ? names[index].c_str() : "";
}

}  // namespace

extern "C" {

hearth_status hearth_scheduler_drain(hearth_scheduler* scheduler,
                                     hearth_results** out,
                                     hearth_error** error) {
  return Guard(error, "hearth_scheduler_drain", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_drain", error);
    HEARTH_C_REQUIRE(out, "hearth_scheduler_drain", error);
    *out = nullptr;
    auto results = std::make_unique<hearth_results>();
    results->user_names = scheduler->user_names;
    results->class_names = scheduler->class_names;
    // Allocated before draining: once moved out of the scheduler, results
    // must reach the caller, not be lost to an allocation failure.
    scheduler->scheduler->DrainResults(&results->results);
    *out = results.release();
    return HEARTH_OK;
  });
}

size_t hearth_results_count(const hearth_results* results) {
  return results == nullptr ? 0 : results->results.size();
}

hearth_status hearth_results_get(const hearth_results* results, size_t index,
                                 hearth_result* out, hearth_error** error) {
  return Guard(error, "hearth_results_get", [&] {
    HEARTH_C_REQUIRE(results, "hearth_results_get", error);
    HEARTH_C_REQUIRE(out, "hearth_results_get", error);
    if (index >= results->results.size()) {
      return Fail(error, HEARTH_OUT_OF_RANGE,
                  absl::StrCat("hearth_results_get: index ", index,
                               " is past the ", results->results.size(),
                               " results"));
    }
    const hearth::RequestResult& r = results->results[index];
    *out = hearth_result{};
    out->id = r.id.value();
    out->user = NameAt(*results->user_names, r.user.value());
    out->work_class = NameAt(*results->class_names, r.work_class.value());
    out->label = r.label.c_str();
    out->phase = CPhase(r.phase);
    out->finish_reason = static_cast<hearth_finish_reason>(r.finish_reason);
    out->message = r.message.c_str();
    out->prompt_tokens = r.prompt_tokens;
    out->output_tokens = r.output_tokens;
    out->cached_prompt_tokens = r.cached_prompt_tokens;
    out->preemptions = r.preemptions;
    out->retries = r.retries;
    out->arrival_time_s = SecondsFromTime(r.arrival_time);
    out->first_admit_time_s = SecondsFromTime(r.first_admit_time);
    out->first_token_time_s = SecondsFromTime(r.first_token_time);
    out->end_time_s = SecondsFromTime(r.end_time);
    out->handle = r.handle;
    return HEARTH_OK;
  });
}

void hearth_results_free(hearth_results* results) { delete results; }

}  // extern "C"

// File: hearth/request/request_state.h
//
// Where a request is in its life, why it ended, and the record a host receives
// when it ends. Every accepted request ends in exactly one terminal phase
// (finished, cancelled, rejected, timed out, failed), reported exactly once.

#ifndef HEARTH_REQUEST_REQUEST_STATE_H_
#define HEARTH_REQUEST_REQUEST_STATE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "hearth/common/ids.h"

namespace hearth {

enum class RequestPhase : uint8_t {
  // Accepted by Submit, not yet seen by Plan.
  kQueued,
  // Its model is not resident: waiting in the preparation queue for a load,
  // apart from runnable work (see ResidencyConfig).
  kPreparing,
  // Known to the scheduler, waiting for admission (also after a recompute
  // preemption, with progress reset).
  kWaiting,
  // Holds device KV blocks and is being scheduled (prefill or decode).
  kRunning,
  // Preempted by swap: its KV lives in host blocks until swapped back in.
  kSwapped,
  // Submitted with RequestSpec::hold and not released yet: known, counted,
  // timed, but neither runnable nor seen by the policy.
  kHeld,
  // Terminal phases.
  kFinished,
  kCancelled,
  kRejected,
  kTimedOut,
  kFailed,
};

constexpr bool IsTerminal(RequestPhase phase) {
  return phase >= RequestPhase::kFinished;
}
std::string_view PhaseName(RequestPhase phase);

// Why a request reached kFinished.
enum class FinishReason : uint8_t {
  kNone,
  // The engine sampled a stop token.
  kStopToken,
  // The engine matched a stop string.
  kStopString,
  // max_new_tokens generated, or the model's context is full.
  kLength,
  // An embedding's vector was computed (RequestKind::kEmbed).
  kPooled,
};
std::string_view FinishReasonName(FinishReason reason);

// RequestResult
//
// What a host receives once per request when it reaches a terminal phase, via
// Scheduler::DrainResults() or SchedulerOptions::on_result.
struct RequestResult {
  RequestId id;
  // RequestSpec::handle, as submitted.
  uint64_t handle = 0;
  UserId user;
  WorkClassId work_class;
  std::string label;
  // Parallel sampling (RequestSpec::num_samples > 1): sample 0's id, and
  // this sample's index in [0, num_samples). Invalid and 0 otherwise.
  RequestId group;
  int32_t sample_index = 0;
  RequestPhase phase = RequestPhase::kFinished;
  FinishReason finish_reason = FinishReason::kNone;
  // Human-readable reason for every phase but kFinished (e.g. "cancelled by
  // host", "deadline passed while waiting", the engine's error message).
  std::string message;

  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  // Tokens of prompt served from the prefix cache at (the last) admission.
  int32_t cached_prompt_tokens = 0;
  // Preemptions of any cause (PreemptionCause): the scheduler's for memory
  // or policy, and the engine's out-of-KV reports. Retries are not counted
  // here.
  int32_t preemptions = 0;
  // Engine-reported failures that were retried (WorkClassConfig::max_retries).
  int32_t retries = 0;

  absl::Time arrival_time = absl::InfinitePast();
  // InfiniteFuture() when the event never happened (e.g. cancelled while
  // waiting has no first_admit_time).
  absl::Time first_admit_time = absl::InfiniteFuture();
  // An embedding's (RequestKind::kEmbed) is when its vector was computed,
  // its only output, as for its end_time.
  absl::Time first_token_time = absl::InfiniteFuture();
  absl::Time end_time = absl::InfiniteFuture();
};

}  // namespace hearth

#endif  // HEARTH_REQUEST_REQUEST_STATE_H_

#include "hearth/request/request_state.h"

namespace hearth {

std::string_view PhaseName(RequestPhase phase) {
  switch (phase) {
    case RequestPhase::kQueued: return "queued";
    case RequestPhase::kPreparing: return "preparing";
    case RequestPhase::kWaiting: return "waiting";
    case RequestPhase::kRunning: return "running";
    case RequestPhase::kSwapped: return "swapped";
    case RequestPhase::kHeld: return "held";
    case RequestPhase::kFinished: return "finished";
    case RequestPhase::kCancelled: return "cancelled";
    case RequestPhase::kRejected: return "rejected";
    case RequestPhase::kTimedOut: return "timed_out";
    case RequestPhase::kFailed: return "failed";
  }
  return "unknown";
}

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone: return "none";
    case FinishReason::kStopToken: return "stop_token";
    case FinishReason::kStopString: return "stop_string";
    case FinishReason::kLength: return "length";
    case FinishReason::kPooled: return "pooled";
  }
  return "unknown";
}

}  // namespace hearth

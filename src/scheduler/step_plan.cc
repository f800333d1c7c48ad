#include "hearth/scheduler/step_plan.h"

namespace hearth {

std::string_view PreemptionCauseName(PreemptionCause cause) {
  switch (cause) {
    case PreemptionCause::kScheduler: return "scheduler";
    case PreemptionCause::kEngineOutOfKv: return "engine_out_of_kv";
    case PreemptionCause::kRetry: return "retry";
  }
  return "unknown";
}

}  // namespace hearth

// File: src/sim/preemption_tally.h
//
// A metrics sink that counts preemptions by how the scheduler carried them
// out (RequestEvent::preemption_mode): swapped to the host tier, or dropped
// for recompute, which is also what a swap preemption falls back to when the
// host tier is full. The metrics report counts only their sum.

#ifndef HEARTH_SRC_SIM_PREEMPTION_TALLY_H_
#define HEARTH_SRC_SIM_PREEMPTION_TALLY_H_

#include <cstdint>

#include "hearth/metrics/metrics_sink.h"

namespace hearth::internal {

class PreemptionTally final : public MetricsSink {
 public:
  void OnRequestEvent(const RequestEvent& event) override {
    if (event.kind != RequestEventKind::kPreempt) return;
    if (event.preemption_mode == PreemptionMode::kSwap) {
      ++swaps_;
    } else {
      ++recomputes_;
    }
  }
  void OnStep(const StepPlan&, const StepOutcome&) override {}

  uint64_t swaps() const { return swaps_; }
  uint64_t recomputes() const { return recomputes_; }

 private:
  uint64_t swaps_ = 0;
  uint64_t recomputes_ = 0;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_PREEMPTION_TALLY_H_

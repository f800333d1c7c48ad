// File: hearth/hearth.h
//
// Umbrella header: what a host engine needs to drive Hearth -- options,
// requests, the scheduler and its plans and outcomes, the policies, the step
// executor seam and the metrics sink seam. The components have their own
// umbrella headers: hearth/metrics/metrics.h (collector, Prometheus, gauges,
// timelines; in the `hearth::hearth` library), hearth/jobs/jobs.h
// (`hearth::jobs`), hearth/sim/sim.h (`hearth::sim`), hearth/c/hearth.h (the
// C API), and the executors hearth/exec/cpu_reference_executor.h
// (`hearth::reference`) and hearth/exec/cuda_executor.h (`hearth::cuda`).

#ifndef HEARTH_HEARTH_H_
#define HEARTH_HEARTH_H_

#include "hearth/common/clock.h"
#include "hearth/common/ids.h"
#include "hearth/common/names.h"
#include "hearth/exec/engine_loop.h"
#include "hearth/exec/executor_kv_config.h"
#include "hearth/exec/sampling.h"
#include "hearth/exec/step_executor.h"
#include "hearth/exec/step_outcome_fill.h"
#include "hearth/metrics/metrics_sink.h"
#include "hearth/policy/fifo.h"
#include "hearth/policy/mlfq.h"
#include "hearth/policy/policy.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/policy/policy_tree.h"
#include "hearth/policy/preemption_costs.h"
#include "hearth/policy/priority_quota.h"
#include "hearth/policy/vtc.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"
#include "hearth/request/request_view.h"
#include "hearth/scheduler/option_fields.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/scheduler/scheduler_options.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"
#include "hearth/version.h"

#endif  // HEARTH_HEARTH_H_

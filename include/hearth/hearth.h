// File: hearth/hearth.h
//
// Umbrella header: the whole core API (`hearth::hearth`), everything a host
// engine needs to drive Hearth and observe it. The components have their own
// headers and libraries: hearth/exec/cpu_reference_executor.h
// (`hearth::reference`), hearth/exec/cuda_executor.h (`hearth::cuda`) and
// hearth/sim/ (`hearth::sim`).

#ifndef HEARTH_HEARTH_H_
#define HEARTH_HEARTH_H_

#include "hearth/common/clock.h"
#include "hearth/common/ids.h"
#include "hearth/common/names.h"
#include "hearth/exec/executor_kv_config.h"
#include "hearth/exec/step_executor.h"
#include "hearth/exec/step_outcome_fill.h"
#include "hearth/kv/block_allocator.h"
#include "hearth/kv/prefix_cache.h"
#include "hearth/metrics/engine_gauges.h"
#include "hearth/metrics/fairness.h"
#include "hearth/metrics/fanout_sink.h"
#include "hearth/metrics/latency_histogram.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/metrics/metrics_report.h"
#include "hearth/metrics/metrics_sink.h"
#include "hearth/metrics/prometheus.h"
#include "hearth/metrics/sample_series.h"
#include "hearth/metrics/timeline_recorder.h"
#include "hearth/policy/fifo.h"
#include "hearth/policy/mlfq.h"
#include "hearth/policy/policy.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/policy/policy_tree.h"
#include "hearth/policy/priority_quota.h"
#include "hearth/policy/vtc.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"
#include "hearth/request/request_view.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/scheduler/scheduler_options.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"
#include "hearth/version.h"

#endif  // HEARTH_HEARTH_H_

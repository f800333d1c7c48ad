// The C API's opaque objects: what each hearth_* handle holds on the C++ side.
// Only the C API's own files see these definitions.

#ifndef HEARTH_SRC_CAPI_C_HANDLES_H_
#define HEARTH_SRC_CAPI_C_HANDLES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hearth/c/hearth.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/request/request_state.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/scheduler/scheduler_options.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

// Scheduler options plus what the C++ API takes as objects rather than
// values: the policy (by name and configuration, built at create) and the
// metrics collector's weights.
struct hearth_options {
  hearth::SchedulerOptions scheduler;
  std::string policy = "household";
  hearth::PolicyConfig policy_config;
  double metrics_prefill_weight = 1.0;
  double metrics_decode_weight = 2.0;
  int metrics_max_gap_users = 16;
  // The built-in collector ("metrics": {"enabled"}); off, a step costs
  // what the C++ core's does and the metrics calls are refused.
  bool metrics_enabled = true;
  // The add_* setters replace the single default entry on their first call.
  bool users_added = false;
  bool classes_added = false;
};

// hearth_plan_get_arrays' columns of one plan, built on the first call for
// it; the vectors keep their capacity from plan to plan.
struct PlanArrays {
  bool built = false;
  std::vector<uint64_t> id, handle, block_offset, num_block_table, token_offset;
  std::vector<uint32_t> model, blocks;
  std::vector<int32_t> start_position, num_tokens, draft_tokens, token_ids;
  std::vector<uint8_t> flags;
  std::vector<const uint32_t*> block_table;
  // PREEMPTED .. MODEL_COMMANDS, by hearth_plan_list - 1.
  std::vector<hearth_plan_entry> lists[6];
  std::vector<hearth_plan_entry> encoder_inputs, encoder_frees;
};

// The view of an outstanding StepPlan (c_plan.cc): sequences are read from
// the plan itself, their block and token arrays in place.
struct hearth_plan {
  const hearth::StepPlan* plan = nullptr;
  // Built lazily by hearth_plan_get_arrays, which takes the plan as const.
  mutable PlanArrays arrays;
};

// Names by index, shared with every results object so that a result's
// strings outlive neither.
using NameList = std::vector<std::string>;

struct hearth_scheduler {
  // Declared before the scheduler, which reports to it until destroyed.
  // Null when the options turned metrics off.
  std::unique_ptr<hearth::MetricsCollector> collector;
  std::unique_ptr<hearth::Scheduler> scheduler;
  std::shared_ptr<const NameList> user_names;
  std::shared_ptr<const NameList> class_names;
  // Views of the outstanding plans (two with overlapped planning), used in
  // turn.
  hearth_plan plan_views[2];
  int next_view = 0;
};

struct hearth_outcome {
  hearth::StepOutcome outcome;
  // The view hearth_outcome_begin() addressed it to (the scheduler's, which
  // lives as long as the scheduler and forgets its plan at complete); read
  // by hearth_outcome_add_arrays.
  const hearth_plan* view = nullptr;
  // Whether hearth_outcome_begin() addressed it to a plan.
  bool begun = false;
};

struct hearth_results {
  std::vector<hearth::RequestResult> results;
  std::shared_ptr<const NameList> user_names;
  std::shared_ptr<const NameList> class_names;
};

#endif  // HEARTH_SRC_CAPI_C_HANDLES_H_

// File: hearth/sim/sim.h
//
// Umbrella header of the simulator component (`hearth::sim`): scenarios and
// their TOML, workloads and public-trace readers, cost models, the simulated
// executor and clock, reports, capacity and SLO-capacity searches.

#ifndef HEARTH_SIM_SIM_H_
#define HEARTH_SIM_SIM_H_

#include "hearth/sim/agent_trace.h"
#include "hearth/sim/azure_trace.h"
#include "hearth/sim/burstgpt_trace.h"
#include "hearth/sim/capacity_search.h"
#include "hearth/sim/cost_model.h"
#include "hearth/sim/fifo_equivalence.h"
#include "hearth/sim/fitted_cost_model.h"
#include "hearth/sim/gpu_catalog.h"
#include "hearth/sim/household_workload.h"
#include "hearth/sim/latency_capacity.h"
#include "hearth/sim/length_distribution.h"
#include "hearth/sim/load_grid.h"
#include "hearth/sim/load_scaling.h"
#include "hearth/sim/model_catalog.h"
#include "hearth/sim/mooncake_trace.h"
#include "hearth/sim/oracle_policy.h"
#include "hearth/sim/reference_figures.h"
#include "hearth/sim/report_writer.h"
#include "hearth/sim/request_jsonl.h"
#include "hearth/sim/roofline_cost_model.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/scenario_keys.h"
#include "hearth/sim/servegen_dataset.h"
#include "hearth/sim/servegen_trace.h"
#include "hearth/sim/sharegpt_lengths.h"
#include "hearth/sim/simulated_executor.h"
#include "hearth/sim/simulator.h"
#include "hearth/sim/trace_mapping.h"
#include "hearth/sim/workload.h"

#endif  // HEARTH_SIM_SIM_H_

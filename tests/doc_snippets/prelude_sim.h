// The names a simulator example may use without declaring them: the core's
// (prelude_core.h) and the simulator's own context.
#ifndef HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_SIM_H_
#define HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_SIM_H_

#include "hearth/sim/cost_model.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/workload.h"
#include "prelude_core.h"

// cost_model  the step cost model the simulation uses (roofline or fitted)
// workload    the requests to replay
// scenario    a scenario read with LoadScenario()
#undef HEARTH_DOC_PARAMS
#define HEARTH_DOC_PARAMS                                         \
  HEARTH_DOC_CORE_PARAMS,                                         \
      [[maybe_unused]] const hearth::StepCostModel& cost_model,   \
      [[maybe_unused]] const hearth::Workload& workload,          \
      [[maybe_unused]] const hearth::Scenario& scenario

#endif  // HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_SIM_H_

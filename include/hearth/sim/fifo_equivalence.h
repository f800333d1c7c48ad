// File: hearth/sim/fifo_equivalence.h
//
// Warnings for policies that cannot order a scenario's requests differently
// from FIFO, so that a table showing them equal to FIFO is not read as a
// finding about the policy. Judged from the users and work classes that
// have requests and from the policy configuration:
//   vtc        one user has requests: nobody to share between;
//   priority   every class with requests has the same priority: one level;
//   household  one user, and every class with requests has the same TTFT
//              target (or none) and, with quotas, the same priority; its
//              request level is FIFO.
// A policy with agent workflow calls and a head start
// (PolicyConfig::workflow_head_start > 0) can rank those calls earlier, so
// it is never reported then. The warnings speak of admission order: a
// policy may still choose other preemption victims under memory pressure.
//
// Example:
//   for (const std::string& w : hearth::FifoEquivalenceWarnings(scenario, workload)) {
//     std::cerr << "warning: " << w << "\n";
//   }

#ifndef HEARTH_SIM_FIFO_EQUIVALENCE_H_
#define HEARTH_SIM_FIFO_EQUIVALENCE_H_

#include <string>
#include <vector>

#include "hearth/sim/scenario_config.h"
#include "hearth/sim/simulator.h"
#include "hearth/sim/workload.h"

namespace hearth {

// One sentence per policy of scenario.policies that cannot differ from FIFO
// on `workload`, in the scenario's policy order.
std::vector<std::string> FifoEquivalenceWarnings(const Scenario& scenario,
                                                 const Workload& workload);

// The same, judged from one run of the scenario's workload (the users and
// classes its report saw arrive, and its workflows).
std::vector<std::string> FifoEquivalenceWarnings(const Scenario& scenario,
                                                 const SimulationResult& run);

}  // namespace hearth

#endif  // HEARTH_SIM_FIFO_EQUIVALENCE_H_

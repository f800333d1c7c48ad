// Shared set-up for the simulator tests: a scheduler configuration and a
// fitted cost model with round numbers, so expected figures can be worked out
// by hand.

#ifndef HEARTH_TESTS_SIM_SIM_TEST_UTIL_H_
#define HEARTH_TESTS_SIM_SIM_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "hearth/scheduler/scheduler_options.h"
#include "hearth/sim/fitted_cost_model.h"

namespace hearth::testing_sim {

// Every non-empty step costs exactly `step_ms` milliseconds.
inline std::unique_ptr<FittedCostModel> FlatCost(double step_ms) {
  FittedCoefficients c;
  c.c0 = step_ms / 1000;
  return std::move(*FittedCostModel::Create(c));
}

inline SchedulerOptions SmallScheduler(std::vector<std::string> users,
                                       std::vector<std::string> classes) {
  SchedulerOptions o;
  o.models[0].name = "m";
  o.models[0].context_length = 4096;
  o.models[0].kv_bytes_per_token = 1024;
  o.users.clear();
  for (const std::string& u : users) o.users.push_back({u, 1.0});
  o.work_classes.clear();
  for (const std::string& c : classes) o.work_classes.push_back({c, 0});
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 1024;
  o.max_batched_tokens = 2048;
  o.max_running = 64;
  return o;
}

inline std::string Fixture(const std::string& name) {
  return std::string(HEARTH_SIM_TESTDATA) + "/" + name;
}

}  // namespace hearth::testing_sim

#endif  // HEARTH_TESTS_SIM_SIM_TEST_UTIL_H_

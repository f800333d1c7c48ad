// File: tests/testing/residency_workload.h
//
// One seeded random residency scenario for the randomized driver: several
// base models and adapters of them sharing device memory that holds only
// some of them at once, bursts of requests for random models with no
// deadline and no queue timeout, the engine kept running until every
// request ends. Each burst is submitted in the order drawn or reversed, so
// that one seed covers both orders of the same requests. Every invariant is
// checked after every call (SchedulerHarness), and so is NextEventTime():
// while it says work is due, plans keep doing something.

#ifndef HEARTH_TESTS_TESTING_RESIDENCY_WORKLOAD_H_
#define HEARTH_TESTS_TESTING_RESIDENCY_WORKLOAD_H_

#include <cstdint>

#include "absl/status/status.h"

namespace hearth::testing {

enum class ArrivalOrder { kAsDrawn, kReversed };

struct ResidencyWorkloadStats {
  int64_t requests = 0, finished = 0, failed = 0;
  int64_t loads = 0, unloads = 0;
  // Seeds where not every model fits in memory at once.
  int64_t tight_configs = 0;
  void Add(const ResidencyWorkloadStats& o) {
    requests += o.requests; finished += o.finished; failed += o.failed;
    loads += o.loads; unloads += o.unloads; tight_configs += o.tight_configs;
  }
};

// OK when every accepted request ended, exactly once, with every block
// returned; otherwise what was left and why.
absl::Status RunResidencyWorkload(uint64_t seed, ArrivalOrder order,
                                  ResidencyWorkloadStats* stats);

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_TESTING_RESIDENCY_WORKLOAD_H_

// Per-step cost of each policy inside the real scheduler: one engine step
// (Plan + building the outcome + Complete) with `running` sequences decoding
// and `waiting` more queued, mixed over 4 users and 5 work classes.
//
//   build/bench/policy/hearth_policy_step_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//
// Compare each policy's row with the fifo row of the same size (target:
// within 1.5x), and the /10000 rows with the /100000 rows (the waiting
// queue's size must not matter). Counters: allocs/step (0 in steady state),
// seqs/step and preempted/step (a policy that time-slices, like MLFQ with
// small quanta, preempts and readmits every step: that work is counted).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/common/alloc_counter.h"
#include "bench/common/steady_decode.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/scheduler/scheduler.h"

namespace hearth::bench {
namespace {

constexpr int kIterations = 20000;

void BM_PolicyStep(benchmark::State& state, std::string name, bool member_guard = true) {
  PolicyConfig config;
  config.vtc.user_weights = {1, 2, 3, 4};
  config.household_member_guard = member_guard;
  absl::StatusOr<PolicyFactory> factory = MakePolicyFactory(name, config);
  if (!factory.ok()) Die(factory.status());
  const int32_t running = static_cast<int32_t>(state.range(0));
  const int32_t waiting = static_cast<int32_t>(state.range(1));
  // The core's fixture, warmed up for a fixed number of steps: policies that
  // time-slice never reach an all-decode step.
  SteadyDecode fixture(running, waiting, *factory, kIterations + 400, /*users=*/4,
                       /*fixed_warmup=*/200);
  const uint64_t preempted_before = fixture.preempted();
  uint64_t allocations = 0;
  for (auto _ : state) {
    const uint64_t before = AllocationCount();
    fixture.Step();
    allocations += AllocationCount() - before;
  }
  const double steps = static_cast<double>(state.iterations());
  state.counters["allocs/step"] = static_cast<double>(allocations) / steps;
  state.counters["preempted/step"] =
      static_cast<double>(fixture.preempted() - preempted_before) / steps;
  state.counters["seqs/step"] = fixture.last_batch();
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Args({1024, 10000})->Args({1024, 100000})->Iterations(kIterations)
      ->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_PolicyStep, fifo, std::string("fifo"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_PolicyStep, vtc, std::string("vtc"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_PolicyStep, priority, std::string("priority"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_PolicyStep, mlfq, std::string("mlfq"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_PolicyStep, household, std::string("household"))->Apply(Sizes);
// What the household's member guard (PolicyTreeConfig::member_guard) costs.
BENCHMARK_CAPTURE(BM_PolicyStep, household_unguarded, std::string("household"), false)
    ->Apply(Sizes);

}  // namespace
}  // namespace hearth::bench

BENCHMARK_MAIN();

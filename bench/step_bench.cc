// The hot path: one steady decode step (Plan + building the outcome +
// Complete) with many running sequences and a long waiting queue.
//
//   build/bench/hearth_step_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//
// Counters: allocs/step must be 0 (no heap allocation in steady state);
// the waiting-queue size must not matter (compare the /1000 and /100000 rows).

#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/common/time_steps.h"
#include "bench/common/steady_decode.h"
#include "hearth/policy/fifo.h"

namespace hearth::bench {
namespace {

// The core's own cost: FIFO, the cheapest policy (the default household
// policy is measured with the others in bench/policy).
PolicyFactory FifoFactory() {
  return [](const SchedulerOptions&) { return NewFifoPolicy(); };
}

// Steps a speculative fixture's cache is sized for (each may grow a
// sequence by 1 + k tokens).
constexpr int32_t kSpeculativeSteps = 6000;

void BM_SteadyDecodeStep(benchmark::State& state) {
  const int32_t running = static_cast<int32_t>(state.range(0));
  const int32_t waiting = static_cast<int32_t>(state.range(1));
  SteadyDecode fixture(running, waiting, FifoFactory());
  TimeSteps(state, fixture);
}

// The same step, timing only the scheduler's share (Plan and Complete), not
// the stand-in engine that builds the outcome in between.
void BM_SteadyDecodeSchedulerOnly(benchmark::State& state) {
  const int32_t running = static_cast<int32_t>(state.range(0));
  const int32_t waiting = static_cast<int32_t>(state.range(1));
  SteadyDecode fixture(running, waiting, FifoFactory());
  for (auto _ : state) {
    absl::Duration t;
    fixture.Step(&t);
    state.SetIterationTime(absl::ToDoubleSeconds(t));
  }
}

// Speculative decoding (issue 12): the same steady step with `k` draft
// tokens per decode (range 2; 0 is the plain step measured alongside, on
// the same shorter run), the engine accepting all drafts of half the
// decodes and none of the others. Target: k = 4 costs at most 1.5x k = 0.
void BM_SpeculativeDecodeStep(benchmark::State& state) {
  const int32_t running = static_cast<int32_t>(state.range(0));
  const int32_t waiting = static_cast<int32_t>(state.range(1));
  const auto drafts = static_cast<int32_t>(state.range(2));
  SteadyDecode fixture(running, waiting, FifoFactory(), kSpeculativeSteps, 4, 0, drafts);
  TimeSteps(state, fixture);
}
// Overlapped planning (issue 12): the same steady step, each Plan made while
// the step before is still outstanding (range 2: 1) or not (0), measured
// side by side. Every decode then has a pending input. Target: on costs at
// most 1.05x off.
void BM_OverlapDecodeStep(benchmark::State& state) {
  const int32_t running = static_cast<int32_t>(state.range(0));
  const int32_t waiting = static_cast<int32_t>(state.range(1));
  const bool overlap = state.range(2) != 0;
  SteadyDecode fixture(running, waiting, FifoFactory(), 40000, 4, 0, 0, overlap);
  TimeSteps(state, fixture);
}
BENCHMARK(BM_OverlapDecodeStep)
    ->Args({1024, 10000, 0})
    ->Args({1024, 10000, 1})
    ->Iterations(20000)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_SpeculativeDecodeStep)
    ->Args({1024, 10000, 0})
    ->Args({1024, 10000, 4})
    ->Iterations(kSpeculativeSteps / 2)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_SteadyDecodeSchedulerOnly)
    ->Args({1024, 1000})
    ->Args({1024, 10000})
    ->Args({1024, 100000})
    ->Iterations(20000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SteadyDecodeStep)
    ->Args({1024, 1000})
    ->Args({1024, 10000})
    ->Args({1024, 100000})
    ->Args({256, 10000})
    ->Iterations(20000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hearth::bench

BENCHMARK_MAIN();

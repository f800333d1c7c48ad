// File: bench/common/time_steps.h
//
// Times one engine step per benchmark iteration of any fixture with Step()
// and last_batch() (bench/common/steady_decode.h, the C API's), counting
// the heap allocations inside the steps: counters allocs/step (must be 0
// in steady state) and seqs/step.

#ifndef HEARTH_BENCH_COMMON_TIME_STEPS_H_
#define HEARTH_BENCH_COMMON_TIME_STEPS_H_

#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/common/alloc_counter.h"

namespace hearth::bench {

template <typename Fixture>
void TimeSteps(benchmark::State& state, Fixture& fixture) {
  uint64_t allocations = 0;
  for (auto _ : state) {
    const uint64_t before = AllocationCount();
    fixture.Step();
    allocations += AllocationCount() - before;
  }
  state.counters["allocs/step"] = benchmark::Counter(
      static_cast<double>(allocations) / static_cast<double>(state.iterations()));
  state.counters["seqs/step"] = fixture.last_batch();
}

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_COMMON_TIME_STEPS_H_

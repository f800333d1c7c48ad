// File: bench/common/alloc_counter.h
//
// Counts heap allocations made through global operator new in this process,
// so benchmarks can report allocations per step as a counter. Linking
// alloc_counter.cc replaces the global operator new/delete.

#ifndef HEARTH_BENCH_COMMON_ALLOC_COUNTER_H_
#define HEARTH_BENCH_COMMON_ALLOC_COUNTER_H_

#include <cstdint>

namespace hearth::bench {

// Allocations since process start (relaxed atomic; cheap).
uint64_t AllocationCount();

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_COMMON_ALLOC_COUNTER_H_

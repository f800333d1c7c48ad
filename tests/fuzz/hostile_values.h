// Values a careless or hostile host might pass, picked by the fuzzer's bytes:
// mostly small sane ones (so that inputs reach deep states quickly), now and
// then the edges of the type (0, negative, the largest, NaN, infinities).

#ifndef HEARTH_TESTS_FUZZ_HOSTILE_VALUES_H_
#define HEARTH_TESTS_FUZZ_HOSTILE_VALUES_H_

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <limits>

#include "absl/time/time.h"

namespace hearth::fuzz {

// An integer of type T: in [lo, hi] usually, otherwise one of the type's
// edge values or any value at all.
template <typename T>
T SmallOrEdge(FuzzedDataProvider& in, T lo, T hi) {
  using Limits = std::numeric_limits<T>;
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return 0;
    case 1: return static_cast<T>(-1);
    case 2: return Limits::max();
    case 3: return Limits::min();
    case 4: return in.ConsumeIntegral<T>();
    default: return in.ConsumeIntegralInRange<T>(lo, hi);
  }
}

// A double in [lo, hi] usually, otherwise 0, negative, huge, NaN or +-inf.
inline double SmallOrEdgeDouble(FuzzedDataProvider& in, double lo, double hi) {
  using Limits = std::numeric_limits<double>;
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return 0;
    case 1: return -1;
    case 2: return Limits::max();
    case 3: return Limits::quiet_NaN();
    case 4: return Limits::infinity();
    case 5: return -Limits::infinity();
    case 6: return Limits::denorm_min();
    default: return in.ConsumeFloatingPointInRange<double>(lo, hi);
  }
}

// A duration of up to `max_ms` milliseconds usually, otherwise zero,
// negative, infinite either way or any number of nanoseconds.
inline absl::Duration SmallOrEdgeDuration(FuzzedDataProvider& in, int64_t max_ms) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return absl::ZeroDuration();
    case 1: return -absl::Milliseconds(in.ConsumeIntegralInRange<int64_t>(1, max_ms));
    case 2: return absl::InfiniteDuration();
    case 3: return -absl::InfiniteDuration();
    case 4: return absl::Nanoseconds(in.ConsumeIntegral<int64_t>());
    default: return absl::Milliseconds(in.ConsumeIntegralInRange<int64_t>(1, max_ms));
  }
}

// A point in time near `now` usually, otherwise the infinite past or future
// or far away.
inline absl::Time NearOrEdgeTime(FuzzedDataProvider& in, absl::Time now) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return absl::InfinitePast();
    case 1: return absl::InfiniteFuture();
    case 2: return absl::FromUnixNanos(in.ConsumeIntegral<int64_t>());
    default: return now + SmallOrEdgeDuration(in, 10'000);
  }
}

}  // namespace hearth::fuzz

#endif  // HEARTH_TESTS_FUZZ_HOSTILE_VALUES_H_

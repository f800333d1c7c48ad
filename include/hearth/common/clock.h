// File: hearth/common/clock.h
//
// `Clock` is the time seam. The scheduler itself never reads a clock: hosts
// pass `now` to Plan(). Hosts and the simulator use a Clock so real time and
// simulated time are interchangeable.

#ifndef HEARTH_COMMON_CLOCK_H_
#define HEARTH_COMMON_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace hearth {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// Wall-clock time. Thread-safe.
class RealClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

// Time that moves only when told to. Not thread-safe.
class ManualClock : public Clock {
 public:
  explicit ManualClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}
  absl::Time Now() const override { return now_; }
  void Advance(absl::Duration d) { now_ += d; }
  void Set(absl::Time t) { now_ = t; }

 private:
  absl::Time now_;
};

}  // namespace hearth

#endif  // HEARTH_COMMON_CLOCK_H_

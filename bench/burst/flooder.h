// File: bench/burst/flooder.h
//
// One household member submitting tiny requests from their own thread as
// fast as Submit answers: a rejection is counted by code and the next
// attempt follows at once (after a yield on ResourceExhausted, so the engine
// thread can make room), never a reason to stop.

#ifndef HEARTH_BENCH_BURST_FLOODER_H_
#define HEARTH_BENCH_BURST_FLOODER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <thread>

#include "hearth/scheduler/scheduler.h"

namespace hearth::bench {

struct FlooderOptions {
  UserId user;
  // Requests Submit must accept before the flooder stops.
  int64_t requests = 1'000'000;
  uint64_t seed = 1;
  // Token ids per prompt (0: none), to flood the inbox with bytes as well.
  bool token_ids = false;
};

struct FlooderReport {
  uint64_t accepted = 0;
  uint64_t attempts = 0;
  std::map<std::string, uint64_t> rejections;
  double seconds = 0;
};

class Flooder {
 public:
  // `scheduler` must outlive Join().
  Flooder(Scheduler* scheduler, FlooderOptions options);
  ~Flooder();

  void Start();
  // Asks the thread to stop early (the engine gave up waiting).
  void Stop() { stop_.store(true, std::memory_order_relaxed); }
  void Join();

  bool done() const { return done_.load(std::memory_order_acquire); }
  uint64_t accepted() const { return accepted_.load(std::memory_order_relaxed); }
  // Valid after Join().
  const FlooderReport& report() const { return report_; }

 private:
  void Run();

  Scheduler* scheduler_;
  FlooderOptions options_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> accepted_{0};
  FlooderReport report_;
};

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_BURST_FLOODER_H_

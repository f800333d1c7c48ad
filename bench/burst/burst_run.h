// File: bench/burst/burst_run.h
//
// The burst: a scheduler with default options but for two members ("alice"
// the flooder, "bob" the bystander) and a realistic KV size. Alice's thread
// submits a million tiny requests as fast as it can; the engine thread
// (the caller's) loops Plan and Complete with an engine that answers at once,
// timing every Plan; every few steps bob submits one request, and the probe
// records when it is first planned. The run ends once alice's requests are
// all accepted and everything has ended.

#ifndef HEARTH_BENCH_BURST_BURST_RUN_H_
#define HEARTH_BENCH_BURST_BURST_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/burst/bystander_probe.h"
#include "bench/burst/flooder.h"

namespace hearth::bench {

struct BurstConfig {
  int64_t requests = 1'000'000;
  uint64_t seed = 1;
  // Bob submits after every this many steps while alice has work queued.
  int64_t bystander_every_steps = 50;
  // Alice's prompts carry token ids.
  bool flood_token_ids = false;
  // KV memory of the engine and the model's KV bytes per token: 8 GiB for an
  // 8B model in bf16 (32 layers * 8 KV heads * 128 dims * 2 * 2 bytes).
  int64_t kv_bytes = int64_t{8} << 30;
  int64_t kv_bytes_per_token = 131072;
  // Engine compute time per step (a sleep after Plan); 0 answers at once.
  int64_t engine_step_us = 0;
  // The engine gives up after this long (what is left counts as lost).
  double max_seconds = 600;
};

struct BurstReport {
  BurstConfig config;
  absl::Status setup;
  std::string commit;
  int32_t device_blocks = 0;

  FlooderReport alice;
  std::vector<BystanderRequest> bob;

  uint64_t steps = 0;
  // Per step, in step order: Plan()'s duration in nanoseconds, how many of
  // alice's submissions were accepted since the previous Plan (about what
  // that Plan took in), and how many requests were waiting after it.
  std::vector<int64_t> plan_ns;
  // The engine thread's CPU time in Plan() (wall time minus the time the
  // OS ran something else on its core), and Complete()'s wall time.
  std::vector<int64_t> plan_cpu_ns;
  std::vector<int64_t> complete_ns;
  // Whether the OS switched the engine thread out during Plan() (an
  // involuntary context switch: another process wanted its core).
  std::vector<uint8_t> plan_switched_out;
  // Whether the engine thread blocked during Plan() (a voluntary context
  // switch: waiting for a lock held by another thread, or for I/O).
  std::vector<uint8_t> plan_blocked;
  std::vector<int64_t> intake;
  std::vector<int32_t> waiting;
  // Whether the plan scheduled any sequence (idle plans, while the flooder's
  // thread is descheduled, would otherwise fill the percentiles).
  std::vector<uint8_t> busy;
  int32_t max_waiting = 0;
  uint64_t alice_ended = 0;
  uint64_t bob_ended = 0;
  uint64_t lost = 0;
  double wall_seconds = 0;
  int64_t peak_rss_kib = 0;
  bool timed_out = false;
};

BurstReport RunBurst(const BurstConfig& config);

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_BURST_BURST_RUN_H_

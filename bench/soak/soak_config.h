// File: bench/soak/soak_config.h
//
// What one soak run is: a policy, a preemption mode, how many requests, the
// seed and the rates of everything injected; and the scheduler options it
// runs against (a KV cache small enough that preemption keeps happening, the
// household's work classes, several users).

#ifndef HEARTH_BENCH_SOAK_SOAK_CONFIG_H_
#define HEARTH_BENCH_SOAK_SOAK_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth::bench {

struct SoakConfig {
  // A name KnownPolicyNames() lists, or "class-shares" (the policy tree with
  // weighted shares between work classes, which the registry has no name for).
  std::string policy = "fifo";
  PreemptionMode mode = PreemptionMode::kRecompute;
  // Requests Submit must accept before intake stops; the run then drains.
  int64_t requests = 1'000'000;
  uint64_t seed = 1;

  // Scheduler shape.
  int32_t device_blocks = 1536;
  int32_t host_blocks = 4096;
  int32_t max_pending = 2048;
  int32_t max_running = 256;

  // Injection rates. Per step: a host cancel of a random live request, a
  // corrupt outcome before the correct one. Per planned sequence: an
  // engine-reported failure. Per submission: a deliberately invalid spec.
  double cancel_per_step = 0.05;
  double corrupt_per_step = 0.01;
  double failure_per_sequence = 0.0005;
  double invalid_spec_rate = 0.0005;
  // Per step: one Submit beyond max_pending_requests (ResourceExhausted).
  double overfill_per_step = 0.01;
  // Per sampled token: the engine samples a stop token.
  double stop_per_token = 0.03;

  // CheckInvariants() every this many steps (and once at the end).
  int64_t invariant_every_steps = 10'000;
  // RSS is recorded every this many ended requests.
  int64_t rss_every_ended = 100'000;
};

// The policies a full matrix covers: every registry name, then "class-shares".
std::vector<std::string> SoakPolicyNames();

// The options of `config`'s scheduler. InvalidArgument for an unknown policy.
absl::StatusOr<SchedulerOptions> MakeSoakSchedulerOptions(const SoakConfig& config);

std::string ModeName(PreemptionMode mode);

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_SOAK_SOAK_CONFIG_H_

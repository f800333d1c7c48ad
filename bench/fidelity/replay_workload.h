// File: bench/fidelity/replay_workload.h
//
// The request list both sides of the fidelity replay run: a household
// evening compressed to seconds, so a CPU llama.cpp run finishes in about a
// minute. Four members on three work classes:
//   mom      voice  short questions, Poisson arrivals
//   dad      chat   medium prompts, Poisson arrivals
//   grandma  chat   long letters, Poisson arrivals
//   kid      agent  three bursts of long tasks (at 0, 1/3 and 2/3 of the
//                   horizon)
// so that under FIFO the voice questions queue behind the agent bursts and
// the household policy's class priority shows in voice TTFT.
//
// Same options (seed included) -> the same list on every platform (our own
// integer arithmetic and std::log only; no std:: distributions, whose output
// differs between standard libraries).
//
// Example:
//   absl::StatusOr<std::vector<ReplayRequest>> list = MakeReplayWorkload({});
//   std::string jsonl = FormatRequestJsonl(*list, output_lengths);

#ifndef HEARTH_BENCH_FIDELITY_REPLAY_WORKLOAD_H_
#define HEARTH_BENCH_FIDELITY_REPLAY_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hearth::fidelity {

struct ReplayRequest {
  std::string user;
  std::string work_class;
  double arrival_s = 0;  // seconds after the run starts
  int32_t prompt_tokens = 0;
  int32_t max_new_tokens = 0;
};

struct ReplayWorkloadOptions {
  // Arrivals fall in [0, horizon_s). Must be finite and in (0, 3600].
  double horizon_s = 24;
  // Multiplies every member's arrival rate (and the agent bursts' sizes).
  // Must be finite and in (0, 100].
  double load = 1.0;
  uint64_t seed = 1;
};

// The users and classes the list names, in the order the scheduler
// registers them.
std::vector<std::string> ReplayUsers();
std::vector<std::string> ReplayClasses();

// MakeReplayWorkload()
//
// The list, ordered by arrival. InvalidArgument names a bad option.
absl::StatusOr<std::vector<ReplayRequest>> MakeReplayWorkload(const ReplayWorkloadOptions& options);

// FormatRequestJsonl()
//
// The list in the simulator's request JSONL format (hearth/sim/request_jsonl.h),
// with output_tokens[i] as request i's true output length and its
// max_new_tokens as the bound. InvalidArgument when the sizes differ.
absl::StatusOr<std::string> FormatRequestJsonl(absl::Span<const ReplayRequest> requests,
                                               absl::Span<const int32_t> output_tokens);

}  // namespace hearth::fidelity

#endif  // HEARTH_BENCH_FIDELITY_REPLAY_WORKLOAD_H_

// File: bench/soak/soak_run.h
//
// One soak run: a single-threaded host and engine loop around a real
// Scheduler. Each step submits until the configured number of requests is
// live (Submit's rejections are counted by code, never fatal), sometimes
// cancels a live request, plans, builds the outcome a trivial engine would
// (seeded tokens, seeded stop tokens, seeded engine failures), sometimes
// first hands Complete a corrupt outcome that it must reject, then completes
// correctly and drains the results into an exactly-once ledger. After the
// last request is accepted the loop runs until nothing is live, then checks
// that every block is free.

#ifndef HEARTH_BENCH_SOAK_SOAK_RUN_H_
#define HEARTH_BENCH_SOAK_SOAK_RUN_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/soak/outcome_corruptor.h"
#include "bench/soak/soak_config.h"

namespace hearth::bench {

struct RssSample {
  uint64_t ended = 0;
  int64_t rss_kib = 0;
};

struct SoakReport {
  SoakConfig config;
  // Set when the run could not be carried out at all (e.g. Create failed).
  absl::Status setup;

  // Exactly-once accounting.
  uint64_t accepted = 0;
  uint64_t ended = 0;
  uint64_t lost = 0;
  uint64_t duplicated = 0;
  uint64_t unknown = 0;
  uint64_t reissued_ids = 0;
  uint64_t finished = 0;
  uint64_t cancelled = 0;
  uint64_t timed_out = 0;
  uint64_t failed = 0;
  uint64_t rejected = 0;

  // Blocks neither free nor cached once the run has drained.
  int64_t leaked_device_blocks = 0;
  int64_t leaked_host_blocks = 0;
  uint64_t invariant_checks = 0;
  uint64_t invariant_failures = 0;
  std::string first_invariant_failure;

  // Submit's rejections by status code name; deliberately invalid specs that
  // Submit accepted.
  std::map<std::string, uint64_t> submit_rejections;
  uint64_t invalid_specs_sent = 0;
  uint64_t invalid_specs_accepted = 0;

  // Host cancels: accepted, and answered NotFound (the request had ended or
  // was already being cancelled; expected, not an error).
  uint64_t cancels_ok = 0;
  uint64_t cancels_not_found = 0;
  uint64_t cancels_other = 0;

  // Corrupt outcomes: sent, rejected with InvalidArgument, accepted (a bug),
  // rejected with another code (a bug), by kind.
  uint64_t corrupt_sent = 0;
  uint64_t corrupt_rejected = 0;
  uint64_t corrupt_accepted = 0;
  uint64_t corrupt_wrong_code = 0;
  std::array<uint64_t, static_cast<size_t>(Corruption::kCount)> corrupt_by_kind{};
  // Plan() while a rejected outcome left the plan outstanding must be
  // FailedPrecondition; anything else is counted here.
  uint64_t contract_violations = 0;
  std::string first_contract_violation;
  uint64_t injected_failures = 0;

  uint64_t steps = 0;
  uint64_t preemptions = 0;
  uint64_t prefix_hit_tokens = 0;
  double wall_seconds = 0;
  // Whether the drain ended because nothing was live (false: step bound hit).
  bool quiescent = false;

  std::vector<RssSample> rss;
  int64_t peak_rss_kib = 0;
};

SoakReport RunSoak(const SoakConfig& config);

// Whether the report shows the core keeping every promise the soak checks.
bool SoakPassed(const SoakReport& report);

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_SOAK_SOAK_RUN_H_

// The burst benchmark (issue 15): with default options (two members and a
// realistic KV size), alice submits a million tiny requests as fast as she
// can from her own thread while the engine thread plans and completes; bob
// submits now and then. Reports the longest and typical Plan, alice's Submit
// throughput, how soon bob's requests were planned, and peak RSS.
//
//   build-rel/bench/burst/hearth_burst [--requests=1000000] [--seed=1]
//
// Exit status 0 when the acceptance held, 1 otherwise.

#include <algorithm>
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "bench/burst/burst_report.h"
#include "bench/burst/burst_run.h"

ABSL_FLAG(int64_t, requests, 1'000'000, "Requests alice must get accepted.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of alice's request sizes.");
ABSL_FLAG(int64_t, bystander_every_steps, 50, "Bob submits after every this many steps.");
ABSL_FLAG(bool, flood_token_ids, false, "Alice's prompts carry token ids.");
ABSL_FLAG(int64_t, engine_step_us, 0, "Engine compute time per step (0: immediate).");
ABSL_FLAG(double, max_seconds, 600, "Give up after this long.");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  hearth::bench::BurstConfig config;
  config.requests = absl::GetFlag(FLAGS_requests);
  config.seed = absl::GetFlag(FLAGS_seed);
  config.bystander_every_steps = std::max<int64_t>(1, absl::GetFlag(FLAGS_bystander_every_steps));
  config.flood_token_ids = absl::GetFlag(FLAGS_flood_token_ids);
  config.engine_step_us = absl::GetFlag(FLAGS_engine_step_us);
  config.max_seconds = absl::GetFlag(FLAGS_max_seconds);
  const hearth::bench::BurstReport report = hearth::bench::RunBurst(config);
  hearth::bench::PrintBurstReport(report, stdout);
  return hearth::bench::BurstAccepted(report, 5.0) ? 0 : 1;
}

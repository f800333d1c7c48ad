// File: hearth/metrics/metrics_report.h
//
// `MetricsReport` is a value snapshot of what a MetricsCollector aggregated:
// one GroupReport per user, per work class and for everything, plus run-wide
// throughput, goodput and fairness figures. Durations are in seconds, tokens
// are counts. The per-class groups partition every request (their counters
// and histograms add up to `total`); so do the per-user groups. Hosts print it, serialise it (see prometheus.h) or compare two.
//
// Example:
//   hearth::MetricsReport r = collector.Report();
//   for (const hearth::GroupReport& c : r.classes)
//     std::cout << c.name << " p99 TTFT " << c.ttft.p99 << " s\n";

#ifndef HEARTH_METRICS_METRICS_REPORT_H_
#define HEARTH_METRICS_METRICS_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hearth/metrics/latency_histogram.h"
#include "hearth/metrics/sample_series.h"

namespace hearth {

// Requests judged against one kind of SLO target, TTFT or TPOT.
struct SloCount {
  uint64_t met = 0;
  uint64_t missed = 0;

  uint64_t judged() const { return met + missed; }
  // met / judged; 1 when nothing was judged.
  double attainment() const {
    return judged() == 0 ? 1.0 : static_cast<double>(met) / static_cast<double>(judged());
  }
};

struct GroupReport {
  std::string name;
  // The user's share weight (1 for classes and the total).
  double weight = 1.0;

  // Requests by how they ended (arrived counts every request seen).
  uint64_t arrived = 0;
  uint64_t finished = 0;
  uint64_t timed_out = 0;
  uint64_t cancelled = 0;
  uint64_t rejected = 0;
  uint64_t failed = 0;
  uint64_t preemptions = 0;
  // Engine failures the scheduler retried (each restarts the request).
  uint64_t retries = 0;

  // Service. Prefill counts every computed prompt (or recomputed) position,
  // decode every decode step; weighted = prefill_weight * prefill +
  // decode_weight * decode (VTC's cost); normalised = weighted / weight.
  int64_t prefill_tokens = 0;
  int64_t decode_tokens = 0;
  int64_t output_tokens = 0;
  // Multimodal prompts (StepPlan::encoder_inputs): span positions encoded
  // for the group's requests, and those read from the encoder cache instead
  // (outputs are cached per cache scope, so a member's reuse never counts
  // another member's photo).
  int64_t encoder_tokens = 0;
  int64_t encoder_cache_hit_tokens = 0;
  double weighted_service = 0;
  double normalized_service = 0;

  // Latencies in seconds. queue_wait: arrival -> first admission. ttft:
  // arrival -> first token. itl: gap between consecutive tokens of a request
  // (one sample per gap). e2e: arrival -> last token, finished requests only.
  // norm_latency: e2e / output tokens.
  DistributionSummary queue_wait;
  DistributionSummary ttft;
  DistributionSummary itl;
  DistributionSummary e2e;
  DistributionSummary norm_latency;
  // The same four latencies in fixed buckets (latency_histogram.h): exact
  // counts however long the run, what Prometheus histograms are made of.
  LatencyHistograms histograms;

  // Prefix cache, in prompt tokens, counted once per request at its first
  // admission: queried = its prompt, hit = the part found in the cache (its
  // prefill skipped). Readmissions after preemption are not counted, so the
  // ratio is what prefix sharing saves, not a request re-finding its own KV.
  uint64_t prefix_queried_tokens = 0;
  uint64_t prefix_hit_tokens = 0;

  // SLO: eligible counts every ended request except cancelled ones; met those
  // that finished within every target of their class. attainment = met /
  // eligible (1 when nothing was eligible).
  uint64_t slo_eligible = 0;
  uint64_t slo_met = 0;
  double slo_attainment = 1.0;

  // Attainment of each request's own targets, one kind at a time: its
  // effective TTFT and TPOT targets (RequestSpec's override, else its
  // class's), counted once, when it ends. Requests without a target of a
  // kind are not counted in that kind.
  //   TTFT = first token - arrival; TPOT = (last token - first token) /
  //   (tokens - 1), the mean of its inter-token gaps (0 with one token),
  //   as vLLM's and Sarathi-Serve's benchmarks define it. Met: <= target.
  // Finished requests are judged by those figures. Cancelled ones by what
  // came before the cancel: TTFT by the first token, or missed if cancelled
  // after the TTFT deadline without one; TPOT when they had two tokens;
  // else not counted (leaving is the client's choice). Timed out, rejected
  // and failed requests miss TPOT, and TTFT unless their first token came
  // in time (the house did not deliver).
  SloCount ttft_slo;
  SloCount tpot_slo;
};

struct MetricsReport {
  std::vector<GroupReport> users;
  std::vector<GroupReport> classes;
  GroupReport total;

  // First arrival to last event (token or end), and time spent in steps.
  double window_seconds = 0;
  double busy_seconds = 0;
  uint64_t steps = 0;

  // Per second of window.
  double output_tokens_per_s = 0;
  double prefill_tokens_per_s = 0;
  double finished_per_s = 0;
  // Requests (and their output tokens) that met their class SLO, per second.
  double goodput_requests_per_s = 0;
  double goodput_tokens_per_s = 0;

  // Jain's index over users' normalised service (users with no arrivals are
  // left out).
  double jain_index = 1.0;
  // VTC's largest service difference between two backlogged users, in
  // normalised weighted tokens; -1 when not tracked (too many users).
  double max_backlogged_service_gap = -1;
};

}  // namespace hearth

#endif  // HEARTH_METRICS_METRICS_REPORT_H_

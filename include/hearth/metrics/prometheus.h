// File: hearth/metrics/prometheus.h
//
// Renders a MetricsReport (what happened) and, optionally, an EngineGauges
// snapshot (what is now) in the Prometheus text exposition format, version
// 0.0.4, for a host to serve on /metrics. A pure function of its inputs: the
// engine thread takes the report and the gauges, any thread may render.
//
// Units: seconds for latencies, tokens and requests as counts, bytes as
// bytes, ratios as fractions in [0, 1].
//
// Label cardinality is bounded by configuration: per-class series carry
// `class` (classes are configured); per-user series live in families of their
// own (`<prefix>_user_...`, label `user`) and are capped at max_user_series,
// the rest summed into user="_other". Each family has exactly one partition
// label, so `sum()` over it is the whole; there are no unlabelled total
// series beside the labelled ones.
//
// Families (<p> = prefix; c = counter, g = gauge, h = histogram):
//   per class {class}, and per user {user} as <p>_user_...:
//     c <p>_requests_arrived_total
//     c <p>_requests_ended_total{outcome=finished|cancelled|rejected|
//                                timed_out|failed}
//     c <p>_preemptions_total, <p>_retries_total
//     c <p>_prefill_tokens_total, <p>_decode_tokens_total,
//       <p>_output_tokens_total, <p>_weighted_service_total
//     c <p>_slo_met_total, <p>_slo_eligible_total
//     c <p>_slo_requests_total{kind=ttft|tpot, met=true|false}
//       (GroupReport::ttft_slo / tpot_slo: each request against its own
//       targets; requests without a target of a kind are not in it)
//     c <p>_prefix_cache_queried_tokens_total, <p>_prefix_cache_hit_tokens_total
//       (hits within each request's own cache scope, RequestSpec::
//       cache_scope: a member's count never includes another member's
//       blocks, and no series depends on what another scope's prompts hold)
//     c <p>_encoder_tokens_total, <p>_encoder_cache_hit_tokens_total
//       (photos' span positions encoded, and read from the encoder cache,
//       which is scoped like the prefix cache)
//     h <p>_queue_wait_seconds, <p>_ttft_seconds, <p>_itl_seconds,
//       <p>_e2e_seconds (per user only with user_histograms)
//   run-wide:
//     g <p>_prefix_cache_hit_ratio (hit / queried prompt tokens since start)
//     g <p>_output_tokens_per_second, <p>_goodput_requests_per_second,
//       <p>_jain_index, <p>_max_backlogged_service_gap (-1: not tracked)
//   with `gauges` (see engine_gauges.h):
//     g <p>_requests{phase=queued|waiting|preparing|held|running|swapped}
//     g <p>_kv_device_blocks{state=used|cached|free} (sums to the pool)
//     g <p>_kv_device_blocks_usable, <p>_kv_usage_ratio (used / usable)
//     g <p>_kv_host_blocks{state=used|free}
//     g <p>_resident_weight_bytes
//   with `gauges` and router_names, labelled {model_name}:
//     g vllm:num_requests_waiting (queued + waiting + preparing + held +
//       swapped: vLLM counts requests waiting for a grammar or remote KV
//       as waiting too)
//     g vllm:num_requests_running
//     g vllm:kv_cache_usage_perc, vllm:gpu_cache_usage_perc (both KvUsage(),
//       a fraction 0-1 as vLLM reports it despite the name; the second is
//       vLLM's older name, still read by older endpoint pickers)
//   vllm:lora_requests_info is not exported: it lists LoRA adapters loaded
//   and waiting, and EngineGauges does not carry which adapters (models
//   with a base_model) are resident or waiting. A host serving adapters
//   knows them and can append that line itself.
//
// Histogram buckets: LatencyHistogram::kBounds (1 ms ... 300 s, then +Inf),
// documented in latency_histogram.h.
//
// Example:
//   hearth::PrometheusOptions po;
//   po.gauges = hearth::EngineGaugesFrom(scheduler);   // on the engine thread
//   po.router_names = true;                            // vllm:* for routers
//   po.model_name = "llama-3.1-8b";
//   std::string body = hearth::PrometheusText(collector.Report(), po);
//   // hearth_ttft_seconds_bucket{class="voice",le="0.1"} 12

#ifndef HEARTH_METRICS_PROMETHEUS_H_
#define HEARTH_METRICS_PROMETHEUS_H_

#include <optional>
#include <string>

#include "hearth/metrics/engine_gauges.h"
#include "hearth/metrics/metrics_report.h"

namespace hearth {

struct PrometheusOptions {
  // Starts every Hearth metric name; must match [a-zA-Z_:][a-zA-Z0-9_:]*
  // (an invalid prefix is replaced by "hearth").
  std::string prefix = "hearth";

  // The current state; without it no gauge of the scheduler's state (and no
  // router name) is written.
  std::optional<EngineGauges> gauges;

  // Per-user series: the first max_user_series users in configuration order
  // get their own; any others are summed into user="_other" (stable, so a
  // user's counters never move between series). 0 (or less) writes no
  // per-user series.
  int max_user_series = 16;
  // Also per-user latency histograms (4 families of 31 lines per user).
  bool user_histograms = false;

  // Also the names multi-replica routers read (the Gateway API Inference
  // Extension's endpoint picker, llm-d), as vLLM exports them. Needs `gauges`.
  bool router_names = false;
  // The `model_name` label of those series (vLLM's served model name).
  std::string model_name = "hearth";
};

std::string PrometheusText(const MetricsReport& report,
                           const PrometheusOptions& options = {});

}  // namespace hearth

#endif  // HEARTH_METRICS_PROMETHEUS_H_

// File: hearth/metrics/prometheus.h
//
// Renders a MetricsReport in the Prometheus text exposition format (version
// 0.0.4), so a host can serve it on /metrics. Per-group metrics carry a
// `user` or `class` label (the total carries neither); latencies are
// summaries in seconds with quantiles 0.5, 0.9, 0.99 and 1 (the maximum).
// Label values are escaped as the format requires.
//
// Example:
//   std::string body = hearth::PrometheusText(collector.Report());
//   // hearth_ttft_seconds{class="voice",quantile="0.99"} 0.041

#ifndef HEARTH_METRICS_PROMETHEUS_H_
#define HEARTH_METRICS_PROMETHEUS_H_

#include <string>
#include <string_view>

#include "hearth/metrics/metrics_report.h"

namespace hearth {

// `prefix` starts every metric name; it must match [a-zA-Z_:][a-zA-Z0-9_:]*
// (an invalid prefix is replaced by "hearth").
std::string PrometheusText(const MetricsReport& report,
                           std::string_view prefix = "hearth");

}  // namespace hearth

#endif  // HEARTH_METRICS_PROMETHEUS_H_

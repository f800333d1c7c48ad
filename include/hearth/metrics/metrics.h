// File: hearth/metrics/metrics.h
//
// Umbrella header of the metrics component: MetricsCollector (a MetricsSink
// that keeps per-class and per-member latency, SLO attainment and fairness),
// its MetricsReport, the Prometheus exposition and EngineGauges, timelines
// and sample series. Part of the `hearth::hearth` library; hearth/hearth.h
// carries only the MetricsSink seam.

#ifndef HEARTH_METRICS_METRICS_H_
#define HEARTH_METRICS_METRICS_H_

#include "hearth/metrics/engine_gauges.h"
#include "hearth/metrics/fairness.h"
#include "hearth/metrics/fanout_sink.h"
#include "hearth/metrics/latency_histogram.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/metrics/metrics_report.h"
#include "hearth/metrics/metrics_sink.h"
#include "hearth/metrics/prometheus.h"
#include "hearth/metrics/sample_series.h"
#include "hearth/metrics/timeline_recorder.h"

#endif  // HEARTH_METRICS_METRICS_H_

// File: bench/burst/burst_report.h
//
// The burst's markdown report: the flooder's throughput and rejections, the
// Plan durations over the burst, how soon the bystander's requests were
// planned, peak RSS, and whether the acceptance held.

#ifndef HEARTH_BENCH_BURST_BURST_REPORT_H_
#define HEARTH_BENCH_BURST_BURST_REPORT_H_

#include <cstdio>

#include "bench/burst/burst_run.h"

namespace hearth::bench {

void PrintBurstReport(const BurstReport& report, std::FILE* out);

// Every bystander request accepted and planned within one step of its
// arrival, and the longest Plan under `max_plan_ms`.
bool BurstAccepted(const BurstReport& report, double max_plan_ms);

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_BURST_BURST_REPORT_H_

// File: bench/soak/soak_report.h
//
// Markdown tables of soak runs: one row per run with the exactly-once
// accounting, leaks, injections and costs; and the RSS series of each run,
// one column per run, one row per checkpoint.

#ifndef HEARTH_BENCH_SOAK_SOAK_REPORT_H_
#define HEARTH_BENCH_SOAK_SOAK_REPORT_H_

#include <cstdio>
#include <vector>

#include "bench/soak/soak_run.h"

namespace hearth::bench {

// The summary table; `header` false prints only the rows (to append runs
// made by other processes to one table).
void PrintSummaryTable(const std::vector<SoakReport>& reports, bool header, std::FILE* out);

// Submit rejections, injections and corrupt outcomes by kind, one row per run.
void PrintInjectionTable(const std::vector<SoakReport>& reports, bool header, std::FILE* out);

// RSS in MiB at every checkpoint; a column per run.
void PrintRssTable(const std::vector<SoakReport>& reports, std::FILE* out);

// RSS in MiB at every checkpoint; a row per run (appendable across
// processes whose runs share the checkpoints).
void PrintRssRows(const std::vector<SoakReport>& reports, bool header, std::FILE* out);

// Problems worth reading in full (first invariant failure, first contract
// violation), one line each; nothing when there are none.
void PrintProblems(const std::vector<SoakReport>& reports, std::FILE* out);

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_SOAK_SOAK_REPORT_H_

// The names a job-queue example may use without declaring them: the core's
// (prelude_core.h) and the context a host has around its job pool.
#ifndef HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_JOBS_H_
#define HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_JOBS_H_

#include "hearth/jobs/jobs.h"
#include "prelude_core.h"

// jobs         the host's JobPool
// demand       the InteractiveDemand the engine thread computed
// stats        the scheduler's SchedulerStats of this iteration
// voice_p90_ttft, voice_ttft_target
//              the host's recent voice TTFT and its target, seconds
// po           the PrometheusOptions the host renders the core's text with
#undef HEARTH_DOC_PARAMS
#define HEARTH_DOC_PARAMS                                             \
  HEARTH_DOC_CORE_PARAMS, [[maybe_unused]] hearth::JobPool* jobs,     \
      [[maybe_unused]] const hearth::InteractiveDemand& demand,       \
      [[maybe_unused]] const hearth::SchedulerStats& stats,           \
      [[maybe_unused]] double voice_p90_ttft,                         \
      [[maybe_unused]] double voice_ttft_target,                      \
      [[maybe_unused]] const hearth::PrometheusOptions& po

#endif  // HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_JOBS_H_

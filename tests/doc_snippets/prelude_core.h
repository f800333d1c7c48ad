// The names a core example may use without declaring them: the context a
// host program has around the example. Each example is compiled as the body
// of `absl::Status Run(HEARTH_DOC_PARAMS)`, so it may also `return` a status.
// The functions are never called; they only have to compile and link.
#ifndef HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_CORE_H_
#define HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_CORE_H_

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/hearth.h"
#include "hearth/metrics/metrics.h"

namespace hearth_doc_snippets {

// The host's sampler: the next token of a sequence the plan says to sample.
inline hearth::TokenId Sample(const hearth::ScheduledSequence&) { return 0; }

// The host's own kernels running a plan: one outcome entry per sequence.
inline hearth::StepOutcome RunOnGpu(const hearth::StepPlan&) { return {}; }

}  // namespace hearth_doc_snippets

// options     the options a host fills in before Scheduler::Create
// scheduler   a scheduler created from them
// clock       the host's clock
// now         the time of the step being planned
// serving     the engine loop's condition
// collector   a MetricsCollector reporting on the scheduler
// plan, outcome, stop_token
//             inside StepExecutor::Execute: the plan to run, the outcome to
//             fill and the token that ends a request
#define HEARTH_DOC_CORE_PARAMS                                             \
  [[maybe_unused]] hearth::SchedulerOptions& options,                      \
      [[maybe_unused]] hearth::Scheduler& scheduler,                       \
      [[maybe_unused]] const hearth::Clock& clock,                         \
      [[maybe_unused]] absl::Time now, [[maybe_unused]] bool serving,      \
      [[maybe_unused]] const hearth::StepPlan& plan,                       \
      [[maybe_unused]] hearth::StepOutcome* outcome,                       \
      [[maybe_unused]] hearth::TokenId stop_token,                         \
      [[maybe_unused]] hearth::MetricsCollector& collector

#define HEARTH_DOC_PARAMS HEARTH_DOC_CORE_PARAMS

#endif  // HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_CORE_H_

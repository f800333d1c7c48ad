// The names a core example may use without declaring them: the context a
// host program has around the example. Each example is compiled as the body
// of `absl::Status Run(HEARTH_DOC_PARAMS)`, so it may also `return` a status.
// Most examples are only compiled and linked; the README's iteration contract
// also runs (extract_snippets.py's ```cpp run), so RunOnGpu really answers a
// plan.
#ifndef HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_CORE_H_
#define HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_CORE_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/exec/step_outcome_fill.h"
#include "hearth/hearth.h"
#include "hearth/metrics/metrics.h"

namespace hearth_doc_snippets {

// The host's sampler: the next token of a sequence the plan says to sample.
inline hearth::TokenId Sample(const hearth::ScheduledSequence&) { return 0; }

// The host's own kernels running a plan: a pretend GPU, one outcome entry per
// sequence in plan order, sampling token 1 wherever the plan samples (the
// scheduler ends each request at its max_new_tokens).
inline hearth::StepOutcome RunOnGpu(const hearth::StepPlan& plan) {
  hearth::StepOutcome outcome;
  hearth::StartStepOutcome(plan, &outcome);
  for (const hearth::ScheduledSequence& s : plan.sequences) {
    hearth::SequenceOutcome& o = outcome.sequences.emplace_back();
    o.id = s.id;
    if (s.sample) hearth::RecordSampledToken(/*token=*/1, /*ends_request=*/false, o);
  }
  return outcome;
}

}  // namespace hearth_doc_snippets

// options     the options a host fills in before Scheduler::Create
// scheduler   a scheduler created from them
// host_clock  the host's plan clock (not `clock`, which is also ::clock())
// now         the time of the step being planned
// serving     the engine loop's condition
// collector   a MetricsCollector reporting on the scheduler
// plan, outcome, stop_token
//             inside StepExecutor::Execute: the plan to run, the outcome to
//             fill and the token that ends a request
#define HEARTH_DOC_CORE_PARAMS                                             \
  [[maybe_unused]] hearth::SchedulerOptions& options,                      \
      [[maybe_unused]] hearth::Scheduler& scheduler,                       \
      [[maybe_unused]] const hearth::Clock& host_clock,                    \
      [[maybe_unused]] absl::Time now, [[maybe_unused]] bool serving,      \
      [[maybe_unused]] const hearth::StepPlan& plan,                       \
      [[maybe_unused]] hearth::StepOutcome* outcome,                       \
      [[maybe_unused]] hearth::TokenId stop_token,                         \
      [[maybe_unused]] hearth::MetricsCollector& collector

#define HEARTH_DOC_PARAMS HEARTH_DOC_CORE_PARAMS

namespace hearth_doc_snippets {

// Runs a ```cpp run example: `run` is its Run function, given real objects
// for the prelude's names (default options, a scheduler made from them, a
// real clock, an empty plan). What the example returns is the test's verdict.
template <typename Example>
absl::Status RunExample(Example run) {
  hearth::SchedulerOptions options;
  absl::StatusOr<std::unique_ptr<hearth::Scheduler>> scheduler =
      hearth::Scheduler::Create(options);
  if (!scheduler.ok()) return scheduler.status();
  absl::StatusOr<std::unique_ptr<hearth::MetricsCollector>> collector =
      hearth::MetricsCollector::Create(hearth::MetricsOptionsFor(options));
  if (!collector.ok()) return collector.status();
  hearth::RealClock host_clock;
  hearth::StepPlan plan;
  hearth::StepOutcome outcome;
  return run(options, **scheduler, host_clock, host_clock.Now(), /*serving=*/false, plan,
             &outcome, /*stop_token=*/-1, **collector);
}

}  // namespace hearth_doc_snippets

#endif  // HEARTH_TESTS_DOC_SNIPPETS_PRELUDE_CORE_H_

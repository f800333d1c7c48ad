// A program outside the Hearth tree that uses only the installed package: it
// submits one request and drives it to completion, and checks that the
// library it linked is the version its headers name.
#include <cstdio>
#include <vector>

#include "hearth/hearth.h"
#include "hearth/version.h"

int main() {
  if (hearth::Version() != HEARTH_VERSION_STRING) return 6;
  hearth::SchedulerOptions options;
  options.kv.num_device_blocks = 64;
  auto scheduler = hearth::Scheduler::Create(options);
  if (!scheduler.ok()) return 1;
  hearth::RequestSpec spec;
  spec.prompt_tokens = 40;
  spec.max_new_tokens = 3;
  if (!(*scheduler)->Submit(spec).ok()) return 2;
  absl::Time now = absl::UnixEpoch();
  for (int i = 0; i < 10; ++i) {
    auto plan = (*scheduler)->Plan(now);
    if (!plan.ok()) return 3;
    hearth::StepOutcome outcome;
    outcome.step = (*plan)->step;
    for (const auto& s : (*plan)->sequences) {
      outcome.sequences.push_back({.id = s.id, .produced_token = s.sample});
    }
    if (!(*scheduler)->Complete(outcome).ok()) return 4;
    now += absl::Milliseconds(10);
  }
  std::vector<hearth::RequestResult> results;
  (*scheduler)->DrainResults(&results);
  if (results.size() != 1 || results[0].output_tokens != 3) return 5;
  std::printf("consumer ok: hearth %s, %d tokens\n", HEARTH_VERSION_STRING,
              results[0].output_tokens);
  return 0;
}

// File: tests/testing/fake_executor.h
//
// A StepExecutor for tests: produces a deterministic token per sampled
// sequence and stops each request at a hidden target length (as a real model
// would stop at EOS), optionally failing sequences at random. A speculative
// decode accepts a random number of its drafts (the tokens it would have
// produced anyway, so outputs do not depend on speculation).

#ifndef HEARTH_TESTS_TESTING_FAKE_EXECUTOR_H_
#define HEARTH_TESTS_TESTING_FAKE_EXECUTOR_H_

#include <cstdint>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "hearth/exec/step_executor.h"

namespace hearth::testing {

class FakeExecutor : public StepExecutor {
 public:
  explicit FakeExecutor(uint64_t seed = 1, int32_t vocab = 1000)
      : rng_(seed), draft_rng_(seed ^ 0xd1b54a32d192ed03ULL), vocab_(vocab) {}

  // The request stops (kStopToken) after `tokens` outputs; unset requests run
  // to max_new_tokens.
  void SetStopAfter(RequestId id, int32_t tokens) { stop_after_[id] = tokens; }
  // Probability that a planned sequence fails.
  void set_failure_rate(double p) { failure_rate_ = p; }
  // Chance that a sequence is reported out of KV (SequenceOutcome::out_of_kv).
  void set_out_of_kv_rate(double p) { out_of_kv_rate_ = p; }
  // Probability that a model load in the plan fails.
  void set_load_failure_rate(double p) { load_failure_rate_ = p; }

  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override;
  // Overlapped planning: forgets the tokens of `plan`'s voided entries
  // (call once their Complete() returned), as an engine drops them.
  void Discard(const StepPlan& plan, const StepOutcome& outcome);

  // Deterministic token for (request, position): what "the model" says.
  static TokenId TokenFor(RequestId id, int32_t position, int32_t vocab) {
    return static_cast<TokenId>((id.value() * 2654435761u + position * 40503u) % vocab);
  }

 private:
  std::mt19937_64 rng_;
  // Its own stream, so that plans without drafts draw as before.
  std::mt19937_64 draft_rng_;
  int32_t vocab_;
  double failure_rate_ = 0.0;
  double out_of_kv_rate_ = 0.0;
  double load_failure_rate_ = 0.0;
  absl::flat_hash_map<RequestId, int32_t> stop_after_;
  absl::flat_hash_map<RequestId, int32_t> produced_;
};

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_TESTING_FAKE_EXECUTOR_H_

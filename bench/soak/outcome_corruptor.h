// File: bench/soak/outcome_corruptor.h
//
// Corrupt versions of a correct StepOutcome, each one violating one rule of
// Scheduler::Complete's contract: the wrong step, a time before the plan's,
// a sequence missing or extra, a wrong or reordered id, a token where none
// was sampled or none where one was, a finish reason the engine may not
// report (kLength) or that does not exist, a finish without a token, a token
// outside the vocabulary, a failed load the plan never asked for. Complete
// must reject each with InvalidArgument and apply nothing.

#ifndef HEARTH_BENCH_SOAK_OUTCOME_CORRUPTOR_H_
#define HEARTH_BENCH_SOAK_OUTCOME_CORRUPTOR_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "bench/common/seeded_random.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth::bench {

enum class Corruption : uint8_t {
  kWrongStep,
  kCompletedBeforePlan,
  kCompletedAtInfinity,
  kMissingSequence,
  kExtraSequence,
  kWrongId,
  kSwappedOrder,
  kTokenNotSampled,
  kNoTokenWhereSampled,
  kFinishLength,
  kFinishJunk,
  kFinishWithoutToken,
  kNegativeToken,
  kTokenBeyondVocab,
  kUnplannedFailedLoad,
  kCount,
};

std::string_view CorruptionName(Corruption c);

class OutcomeCorruptor {
 public:
  explicit OutcomeCorruptor(int32_t vocab_size) : vocab_size_(vocab_size) {}

  // Writes into `bad` a corrupt copy of `good` (the correct outcome of
  // `plan`) and returns which rule it breaks, drawn among those `plan` makes
  // possible.
  Corruption Corrupt(const StepPlan& plan, const StepOutcome& good, SeededRandom& random,
                     StepOutcome* bad) const;

 private:
  // Index of a sequence with `sample` equal to `sampled` whose outcome is
  // not a failure, or -1.
  static int64_t Pick(const StepPlan& plan, const StepOutcome& good, bool sampled,
                      SeededRandom& random);

  int32_t vocab_size_;
};

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_SOAK_OUTCOME_CORRUPTOR_H_

#include "bench/soak/outcome_corruptor.h"

#include <utility>
#include <vector>

namespace hearth::bench {

std::string_view CorruptionName(Corruption c) {
  switch (c) {
    case Corruption::kWrongStep: return "wrong step";
    case Corruption::kCompletedBeforePlan: return "completed before the plan";
    case Corruption::kCompletedAtInfinity: return "completed at infinity";
    case Corruption::kMissingSequence: return "missing sequence";
    case Corruption::kExtraSequence: return "extra sequence";
    case Corruption::kWrongId: return "wrong id";
    case Corruption::kSwappedOrder: return "swapped order";
    case Corruption::kTokenNotSampled: return "token not sampled";
    case Corruption::kNoTokenWhereSampled: return "no token where sampled";
    case Corruption::kFinishLength: return "finish kLength";
    case Corruption::kFinishJunk: return "finish junk";
    case Corruption::kFinishWithoutToken: return "finish without token";
    case Corruption::kNegativeToken: return "negative token";
    case Corruption::kTokenBeyondVocab: return "token beyond vocab";
    case Corruption::kUnplannedFailedLoad: return "unplanned failed load";
    case Corruption::kCount: break;
  }
  return "?";
}

int64_t OutcomeCorruptor::Pick(const StepPlan& plan, const StepOutcome& good, bool sampled,
                               SeededRandom& random) {
  const int64_t n = static_cast<int64_t>(plan.sequences.size());
  if (n == 0) return -1;
  // Start at a random place and take the first match: cheap, and unbiased
  // enough for a soak.
  const int64_t start = random.Uniform(0, n - 1);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = (start + k) % n;
    if (plan.sequences[i].sample == sampled && good.sequences[i].error.empty()) return i;
  }
  return -1;
}

Corruption OutcomeCorruptor::Corrupt(const StepPlan& plan, const StepOutcome& good,
                                     SeededRandom& random, StepOutcome* bad) const {
  *bad = good;
  const int64_t n = static_cast<int64_t>(plan.sequences.size());
  const int64_t sampled = Pick(plan, good, true, random);
  const int64_t unsampled = Pick(plan, good, false, random);
  std::vector<Corruption> possible = {Corruption::kWrongStep, Corruption::kCompletedBeforePlan,
                                      Corruption::kCompletedAtInfinity,
                                      Corruption::kExtraSequence,
                                      Corruption::kUnplannedFailedLoad};
  if (n >= 1) {
    possible.push_back(Corruption::kMissingSequence);
    possible.push_back(Corruption::kWrongId);
  }
  if (n >= 2 && plan.sequences[0].id != plan.sequences[n - 1].id) {
    possible.push_back(Corruption::kSwappedOrder);
  }
  if (unsampled >= 0) {
    possible.push_back(Corruption::kTokenNotSampled);
    possible.push_back(Corruption::kFinishWithoutToken);
  }
  if (sampled >= 0) {
    for (Corruption c : {Corruption::kNoTokenWhereSampled, Corruption::kFinishLength,
                         Corruption::kFinishJunk, Corruption::kNegativeToken,
                         Corruption::kTokenBeyondVocab}) {
      possible.push_back(c);
    }
  }
  const Corruption c = possible[random.Uniform(0, static_cast<int64_t>(possible.size()) - 1)];
  switch (c) {
    case Corruption::kWrongStep:
      bad->step = random.Bernoulli(0.5) ? good.step + 1 : random.Next();
      if (bad->step == good.step) bad->step = good.step - 1;
      break;
    case Corruption::kCompletedBeforePlan:
      bad->completed_at = plan.now - absl::Microseconds(random.Uniform(1, 1'000'000));
      break;
    case Corruption::kCompletedAtInfinity:
      bad->completed_at = absl::InfiniteFuture();
      break;
    case Corruption::kMissingSequence:
      bad->sequences.erase(bad->sequences.begin() + random.Uniform(0, n - 1));
      break;
    case Corruption::kExtraSequence: {
      SequenceOutcome& junk = bad->sequences.emplace_back();
      junk.id = RequestId(random.Next());
      junk.produced_token = true;
      junk.token = static_cast<TokenId>(random.Next());
      break;
    }
    case Corruption::kWrongId: {
      SequenceOutcome& o = bad->sequences[random.Uniform(0, n - 1)];
      o.id = random.Bernoulli(0.5) ? RequestId(o.id.value() + 1) : RequestId(random.Next());
      break;
    }
    case Corruption::kSwappedOrder:
      std::swap(bad->sequences[0], bad->sequences[n - 1]);
      break;
    case Corruption::kTokenNotSampled:
      bad->sequences[unsampled].produced_token = true;
      break;
    case Corruption::kNoTokenWhereSampled:
      bad->sequences[sampled].produced_token = false;
      bad->sequences[sampled].finish = FinishReason::kNone;
      break;
    case Corruption::kFinishLength:
      bad->sequences[sampled].finish = FinishReason::kLength;
      break;
    case Corruption::kFinishJunk:
      bad->sequences[sampled].finish = static_cast<FinishReason>(random.Uniform(4, 255));
      break;
    case Corruption::kFinishWithoutToken:
      bad->sequences[unsampled].finish = FinishReason::kStopToken;
      break;
    case Corruption::kNegativeToken:
      bad->sequences[sampled].token = -static_cast<TokenId>(random.Uniform(1, 1 << 30));
      break;
    case Corruption::kTokenBeyondVocab:
      bad->sequences[sampled].token =
          vocab_size_ + static_cast<TokenId>(random.Uniform(0, 1 << 20));
      break;
    case Corruption::kUnplannedFailedLoad:
      bad->failed_loads.push_back({ModelId(0), "injected: a load nobody asked for"});
      break;
    case Corruption::kCount:
      break;
  }
  return c;
}

}  // namespace hearth::bench

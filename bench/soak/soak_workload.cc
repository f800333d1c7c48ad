#include "bench/soak/soak_workload.h"

#include <algorithm>
#include <cstdint>

namespace hearth::bench {

namespace {

// Work class indices of HouseholdWorkClasses().
constexpr uint32_t kVoice = 0;
constexpr uint32_t kAgent = 2;
constexpr uint32_t kEmbedding = 3;

}  // namespace

SoakWorkload::SoakWorkload(uint64_t seed, double invalid_rate)
    : random_(seed), invalid_rate_(invalid_rate) {
  for (int i = 0; i < 6; ++i) {
    std::vector<TokenId>& p = system_prompts_.emplace_back();
    const int64_t length = random_.Uniform(48, 600);
    for (int64_t t = 0; t < length; ++t) {
      p.push_back(static_cast<TokenId>(random_.Uniform(0, kVocab - 1)));
    }
  }
}

RequestSpec SoakWorkload::Next(absl::Time now, bool* deliberately_invalid) {
  RequestSpec spec;
  spec.user = UserId(static_cast<uint32_t>(random_.Uniform(0, kUsers - 1)));
  // Chat and agents dominate, voice and embeddings are frequent and small,
  // maintenance is rare and long.
  const int64_t c = random_.Uniform(0, 99);
  const uint32_t work_class = c < 15 ? 0 : c < 50 ? 1 : c < 80 ? 2 : c < 95 ? 3 : 4;
  spec.work_class = WorkClassId(work_class);

  const int64_t size = random_.Uniform(0, 99);
  if (work_class == kVoice) {
    spec.prompt_tokens = static_cast<int32_t>(random_.Uniform(8, 96));
    spec.max_new_tokens = static_cast<int32_t>(random_.Uniform(4, 48));
  } else if (work_class == kEmbedding) {
    spec.prompt_tokens = static_cast<int32_t>(random_.Uniform(16, 512));
    spec.max_new_tokens = 1;
  } else if (size < 70) {
    spec.prompt_tokens = static_cast<int32_t>(random_.Uniform(16, 256));
    spec.max_new_tokens = static_cast<int32_t>(random_.Uniform(1, 64));
  } else if (size < 95) {
    spec.prompt_tokens = static_cast<int32_t>(random_.Uniform(256, 1024));
    spec.max_new_tokens = static_cast<int32_t>(random_.Uniform(16, 256));
  } else {
    spec.prompt_tokens = static_cast<int32_t>(random_.Uniform(1024, 3000));
    spec.max_new_tokens = static_cast<int32_t>(random_.Uniform(64, 512));
  }
  spec.priority = static_cast<int32_t>(random_.Uniform(-2, 2));

  // A third of prompts carry ids: a shared system prompt, then their own text.
  if (random_.Bernoulli(0.33)) {
    const auto& prefix = system_prompts_[random_.Uniform(0, system_prompts_.size() - 1)];
    spec.prompt_tokens = std::max<int32_t>(spec.prompt_tokens,
                                           static_cast<int32_t>(prefix.size()) + 1);
    spec.prompt_token_ids.reserve(spec.prompt_tokens);
    spec.prompt_token_ids.assign(prefix.begin(), prefix.end());
    while (static_cast<int32_t>(spec.prompt_token_ids.size()) < spec.prompt_tokens) {
      spec.prompt_token_ids.push_back(static_cast<TokenId>(random_.Uniform(0, kVocab - 1)));
    }
  }
  if (work_class == kAgent && random_.Bernoulli(0.6)) {
    spec.parent = last_agent_call_[spec.user.value()];
  }
  if (random_.Bernoulli(0.05)) {
    spec.deadline = now + absl::Milliseconds(random_.Uniform(20, 3000));
  }
  spec.label = "soak";

  *deliberately_invalid = random_.Bernoulli(invalid_rate_);
  if (*deliberately_invalid) MakeInvalid(spec);
  return spec;
}

void SoakWorkload::MakeInvalid(RequestSpec& spec) {
  switch (random_.Uniform(0, 6)) {
    case 0: spec.prompt_tokens = 0; break;
    case 1: spec.max_new_tokens = -1; break;
    case 2: spec.user = UserId(kUsers + 7); break;
    case 3: spec.work_class = WorkClassId(kClasses); break;
    case 4: spec.max_new_tokens = kContext; break;  // prompt + output beyond the context
    case 5:  // token ids of the wrong count
      spec.prompt_token_ids.assign(static_cast<size_t>(spec.prompt_tokens) + 3, 1);
      break;
    default:  // a token id outside the vocabulary
      spec.prompt_token_ids.assign(static_cast<size_t>(spec.prompt_tokens), 5);
      spec.prompt_token_ids.back() = kVocab + 11;
      break;
  }
}

void SoakWorkload::Accepted(const RequestSpec& spec, RequestId id) {
  if (spec.work_class.value() == kAgent) last_agent_call_[spec.user.value()] = id;
}

}  // namespace hearth::bench

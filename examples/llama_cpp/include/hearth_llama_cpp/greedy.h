// File: hearth_llama_cpp/greedy.h
//
// Greedy sampling, and the plain llama.cpp run that the Hearth-scheduled
// engine is checked against: one sequence at a time, its prompt in chunks of
// at most n_batch tokens, then one token per llama_decode() until max tokens
// or an end-of-generation token. No Hearth code is involved.
//
// Example:
//   auto run = hearth::llama_cpp::RunGreedyAlone(ctx, prompt, 32, {});
//   for (int32_t t : run->tokens) ...

#ifndef HEARTH_LLAMA_CPP_GREEDY_H_
#define HEARTH_LLAMA_CPP_GREEDY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "llama.h"

namespace hearth::llama_cpp {

struct GreedyPick {
  int32_t token = 0;
  // Top logit minus the runner-up: how far from a tie the choice was.
  float margin = 0.0f;
};

// The arg max of `logits` (lowest id among equals) and its margin.
GreedyPick PickGreedy(absl::Span<const float> logits);

struct GreedyRunOptions {
  // Most prompt tokens per llama_decode(); 0 means the context's n_batch.
  int32_t prompt_chunk = 0;
  // Keep the full logits of every sampled step (for comparisons).
  bool keep_logits = false;
};

struct GreedyRun {
  // Generated tokens, the end-of-generation token included when one ended it.
  std::vector<int32_t> tokens;
  // margins[i] is the top-2 margin of tokens[i].
  std::vector<float> margins;
  // logits[i] produced tokens[i]; empty unless keep_logits.
  std::vector<std::vector<float>> logits;
  bool ended_by_eog = false;
};

// RunGreedyAlone()
//
// Clears the context's memory, then runs `prompt` alone as sequence 0 and
// generates up to `max_new_tokens` greedily. InvalidArgument for an empty
// prompt, max_new_tokens < 1, or a prompt that does not fit n_ctx; Internal
// when llama_decode() fails.
absl::StatusOr<GreedyRun> RunGreedyAlone(llama_context* ctx,
                                         absl::Span<const int32_t> prompt,
                                         int32_t max_new_tokens,
                                         const GreedyRunOptions& options);

}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_GREEDY_H_

// Shared set-up for the llama.cpp integration tests: the tiny model loaded
// into llama.cpp, reference runs of prompts chosen to avoid near-ties, and a
// loop that drives a LlamaEngine on a manual clock.

#ifndef HEARTH_TESTS_LLAMA_CPP_LLAMA_TEST_ENV_H_
#define HEARTH_TESTS_LLAMA_CPP_LLAMA_TEST_ENV_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/common/clock.h"
#include "hearth_llama_cpp/greedy.h"
#include "hearth_llama_cpp/llama_engine.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "hearth_llama_cpp/tiny_gguf.h"

namespace hearth::llama_cpp::testing {

// The tiny model, written to a temporary file and loaded (the file is
// removed once llama.cpp has it).
class TinyLlama {
 public:
  static absl::StatusOr<std::unique_ptr<TinyLlama>> Create(const TinyModelSpec& spec = {});
  llama_model* model() const { return model_.get(); }
  absl::StatusOr<ContextPtr> NewContext(const ContextOptions& options) const;

 private:
  explicit TinyLlama(ModelPtr model) : model_(std::move(model)) {}
  ModelPtr model_;
};

struct ReferencePrompt {
  std::vector<int32_t> prompt;
  int32_t max_new_tokens = 0;
  // The plain one-sequence llama.cpp run, logits kept.
  GreedyRun run;
};

struct PromptSet {
  int32_t count = 8;
  int32_t min_len = 8;
  int32_t max_len = 40;
  int32_t max_new_tokens = 24;
  // A prompt is used only if every greedy step of its reference run beats
  // the runner-up logit by at least this much.
  float min_margin = 0.02f;
  uint64_t seed = 1;
};

// Random printable-byte prompts whose reference runs (on `ctx`, alone) have
// no near-tie, with those runs.
absl::StatusOr<std::vector<ReferencePrompt>> TieFreePrompts(llama_context* ctx,
                                                            const PromptSet& set);

// Steps `engine` (advancing `clock` 1 ms per step) until nothing is pending,
// at most `max_steps` steps; returns the completions.
absl::StatusOr<std::vector<Completion>> RunToCompletion(LlamaEngine& engine,
                                                        ManualClock& clock,
                                                        int max_steps = 100000);

// Largest |a[i] - b[i]|; infinity when the sizes differ.
float MaxAbsDiff(const std::vector<float>& a, absl::Span<const float> b);

}  // namespace hearth::llama_cpp::testing

#endif  // HEARTH_TESTS_LLAMA_CPP_LLAMA_TEST_ENV_H_

#include "llama_test_env.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"

namespace hearth::llama_cpp::testing {

absl::StatusOr<std::unique_ptr<TinyLlama>> TinyLlama::Create(const TinyModelSpec& spec) {
  SetLlamaLogging(false);
  absl::Status loaded = LoadLlamaBackends("");
  if (!loaded.ok()) return loaded;
  const std::string path =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("hearth_llama_test_", getpid(), "_", spec.seed, ".gguf"))
          .string();
  absl::Status written = WriteTinyLlamaGguf(spec, path);
  if (!written.ok()) return written;
  absl::StatusOr<ModelPtr> model = LoadModel(path);
  std::remove(path.c_str());
  if (!model.ok()) return model.status();
  return std::unique_ptr<TinyLlama>(new TinyLlama(*std::move(model)));
}

absl::StatusOr<ContextPtr> TinyLlama::NewContext(const ContextOptions& options) const {
  return CreateContext(model_.get(), options);
}

absl::StatusOr<std::vector<ReferencePrompt>> TieFreePrompts(llama_context* ctx,
                                                            const PromptSet& set) {
  std::mt19937_64 rng(set.seed);
  std::vector<ReferencePrompt> out;
  GreedyRunOptions options;
  options.keep_logits = true;
  for (int attempt = 0; static_cast<int32_t>(out.size()) < set.count; ++attempt) {
    if (attempt > 50 * set.count) {
      return absl::NotFoundError(absl::StrCat("only ", out.size(), " of ", set.count,
                                              " prompts are free of near-ties"));
    }
    ReferencePrompt p;
    const int32_t len = set.min_len + static_cast<int32_t>(rng() % (set.max_len - set.min_len + 1));
    for (int32_t i = 0; i < len; ++i) p.prompt.push_back(32 + static_cast<int32_t>(rng() % 95));
    p.max_new_tokens = set.max_new_tokens;
    absl::StatusOr<GreedyRun> run = RunGreedyAlone(ctx, p.prompt, p.max_new_tokens, options);
    if (!run.ok()) return run.status();
    bool tie = false;
    for (float m : run->margins) tie = tie || m < set.min_margin;
    if (tie) continue;
    p.run = *std::move(run);
    out.push_back(std::move(p));
  }
  return out;
}

absl::StatusOr<std::vector<Completion>> RunToCompletion(LlamaEngine& engine, ManualClock& clock,
                                                        int max_steps) {
  std::vector<Completion> done;
  for (int step = 0; engine.pending() > 0; ++step) {
    if (step >= max_steps) {
      return absl::DeadlineExceededError(absl::StrCat(engine.pending(), " requests still pending after ",
                                                      max_steps, " steps"));
    }
    absl::StatusOr<bool> ran = engine.Step(clock);
    if (!ran.ok()) return ran.status();
    clock.Advance(absl::Milliseconds(1));
    for (Completion& c : engine.TakeCompletions()) done.push_back(std::move(c));
  }
  // With overlapped planning the last step is still in flight.
  if (absl::Status s = engine.Finish(clock); !s.ok()) return s;
  for (Completion& c : engine.TakeCompletions()) done.push_back(std::move(c));
  return done;
}

float MaxAbsDiff(const std::vector<float>& a, absl::Span<const float> b) {
  if (a.size() != b.size()) return std::numeric_limits<float>::infinity();
  float worst = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

}  // namespace hearth::llama_cpp::testing

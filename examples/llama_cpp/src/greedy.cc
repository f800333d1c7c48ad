#include "hearth_llama_cpp/greedy.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hearth::llama_cpp {
namespace {

// Owns a llama_batch for one sequence.
class SingleSequenceBatch {
 public:
  explicit SingleSequenceBatch(int32_t capacity)
      : batch_(llama_batch_init(capacity, /*embd=*/0, /*n_seq_max=*/1)) {}
  ~SingleSequenceBatch() { llama_batch_free(batch_); }
  SingleSequenceBatch(const SingleSequenceBatch&) = delete;
  SingleSequenceBatch& operator=(const SingleSequenceBatch&) = delete;

  // Fills positions [pos, pos + tokens.size()) of sequence 0, with logits
  // only for the last token.
  const llama_batch& Fill(absl::Span<const int32_t> tokens, int32_t pos) {
    batch_.n_tokens = static_cast<int32_t>(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
      batch_.token[i] = tokens[i];
      batch_.pos[i] = pos + static_cast<int32_t>(i);
      batch_.n_seq_id[i] = 1;
      batch_.seq_id[i][0] = 0;
      batch_.logits[i] = i + 1 == tokens.size();
    }
    return batch_;
  }

 private:
  llama_batch batch_;
};

}  // namespace

GreedyPick PickGreedy(absl::Span<const float> logits) {
  GreedyPick pick;
  float best = -std::numeric_limits<float>::infinity();
  float second = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] > best) {
      second = best;
      best = logits[i];
      pick.token = static_cast<int32_t>(i);
    } else if (logits[i] > second) {
      second = logits[i];
    }
  }
  pick.margin = best - second;
  return pick;
}

absl::StatusOr<GreedyRun> RunGreedyAlone(llama_context* ctx,
                                         absl::Span<const int32_t> prompt,
                                         int32_t max_new_tokens,
                                         const GreedyRunOptions& options) {
  if (ctx == nullptr) return absl::InvalidArgumentError("context is null");
  const int32_t n_ctx = static_cast<int32_t>(llama_n_ctx(ctx));
  const int32_t n_batch = static_cast<int32_t>(llama_n_batch(ctx));
  if (prompt.empty() || max_new_tokens < 1) {
    return absl::InvalidArgumentError("need a non-empty prompt and max_new_tokens >= 1");
  }
  if (static_cast<int64_t>(prompt.size()) + max_new_tokens > n_ctx) {
    return absl::InvalidArgumentError(absl::StrCat(
        "prompt (", prompt.size(), ") + max_new_tokens (", max_new_tokens,
        ") exceeds n_ctx ", n_ctx));
  }
  const int32_t chunk = options.prompt_chunk > 0 ? std::min(options.prompt_chunk, n_batch) : n_batch;
  const llama_vocab* vocab = llama_model_get_vocab(llama_get_model(ctx));
  const int32_t n_vocab = llama_vocab_n_tokens(vocab);
  llama_memory_clear(llama_get_memory(ctx), /*data=*/true);

  SingleSequenceBatch batch(std::max<int32_t>(chunk, 1));
  GreedyRun run;
  int32_t pos = 0;
  auto decode = [&](absl::Span<const int32_t> tokens) -> absl::Status {
    const int32_t rc = llama_decode(ctx, batch.Fill(tokens, pos));
    if (rc != 0) return absl::InternalError(absl::StrCat("llama_decode returned ", rc));
    pos += static_cast<int32_t>(tokens.size());
    return absl::OkStatus();
  };
  for (size_t begin = 0; begin < prompt.size(); begin += chunk) {
    const size_t n = std::min<size_t>(chunk, prompt.size() - begin);
    if (absl::Status s = decode(prompt.subspan(begin, n)); !s.ok()) return s;
  }
  while (true) {
    const float* logits = llama_get_logits_ith(ctx, -1);
    absl::Span<const float> row(logits, static_cast<size_t>(n_vocab));
    const GreedyPick pick = PickGreedy(row);
    run.tokens.push_back(pick.token);
    run.margins.push_back(pick.margin);
    if (options.keep_logits) run.logits.emplace_back(row.begin(), row.end());
    if (llama_vocab_is_eog(vocab, pick.token)) {
      run.ended_by_eog = true;
      break;
    }
    if (static_cast<int32_t>(run.tokens.size()) >= max_new_tokens) break;
    const int32_t next[1] = {pick.token};
    if (absl::Status s = decode(next); !s.ok()) return s;
  }
  return run;
}

}  // namespace hearth::llama_cpp

// The CPU reference executor: plan bookkeeping, block copies and the batched
// forward pass over the paged KV pool (see cpu_reference_executor.h).

#include "hearth/exec/cpu_reference_executor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "hearth/exec/step_outcome_fill.h"
#include "exec/kv_layout.h"
#include "exec/model_math.h"
#include "exec/paged_step.h"
#include "exec/sequence_tables.h"

namespace hearth {

using exec_internal::BeginPagedStep;
using exec_internal::CopyKind;
using exec_internal::FillPagedOutcome;
using exec_internal::KvLayout;
using exec_internal::PreparedSequence;

namespace {

// One position computed this step.
struct Row {
  int32_t seq;       // index into plan.sequences
  int32_t position;  // absolute position in the sequence
  TokenId token;     // the token fed at that position
  // Logits wanted: the last position of a sampling sequence, and every
  // position of a speculative decode (each verifies the next draft).
  bool logits;
  // The final hidden state wanted, for an embedding's pooling: every
  // position of a mean-pooled one, the pooling position of a last-pooled one.
  bool hidden = false;
  // An encoder span's row for this position, read instead of the token's
  // embedding; null for a text position.
  const float* input = nullptr;
};

// The toy encoder: `length` rows of `width` values in [-0.5, 0.5], each a
// fixed function of the content's bytes, the row and the column.
std::vector<float> ToyEncode(std::string_view content, int32_t length, int32_t width) {
  uint64_t seed = 1469598103934665603ull;  // FNV-1a over the bytes
  for (const char c : content) seed = (seed ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  std::vector<float> out(static_cast<size_t>(length) * static_cast<size_t>(width));
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    out[i] = static_cast<float>(z >> 40) / static_cast<float>(1 << 24) - 0.5f;
  }
  return out;
}

// A mean-pooled embedding's running sum of final hidden states over
// positions [0, end), in position order.
struct PoolSum {
  int32_t end = 0;
  std::vector<float> sum;
};

// A speculative decode's drafts, proposed before the forward pass.
struct Drafts {
  int32_t count = 0;
  std::array<TokenId, kMaxDraftTokens> tokens{};
};

// The n-gram drafter: finds the latest earlier occurrence of the history's
// last 3, 2 or 1 tokens and proposes what followed it, up to `max` tokens.
// A toy (prompt lookup decoding), but speculation only changes how many
// forward passes a sequence takes, never its tokens.
Drafts ProposeDrafts(const std::vector<TokenId>& history, int32_t max) {
  Drafts d;
  const auto n = static_cast<int64_t>(history.size());
  for (int64_t gram = std::min<int64_t>(3, n - 1); gram >= 1 && d.count == 0; --gram) {
    for (int64_t at = n - gram - 1; at >= 0 && d.count == 0; --at) {
      if (!std::equal(history.begin() + at, history.begin() + at + gram,
                      history.end() - gram)) {
        continue;
      }
      for (int64_t k = at + gram; k < n && d.count < max; ++k) {
        d.tokens[static_cast<size_t>(d.count++)] = history[static_cast<size_t>(k)];
      }
    }
  }
  return d;
}

}  // namespace

class CpuReferenceExecutor::Impl {
 public:
  Impl(const CpuReferenceExecutorOptions& options,
       exec_internal::CpuModelWeights weights)
      : options_(options),
        weights_(std::move(weights)),
        rope_(exec_internal::MakeRopeTable(options.model.head_dim(),
                                           options.model.rope_theta,
                                           options.kv.max_positions)),
        tables_({.block_size = options.kv.block_size,
                 .num_device_blocks = options.kv.num_device_blocks,
                 .num_host_blocks = options.kv.num_host_blocks,
                 .max_positions = options.kv.max_positions,
                 .vocab_size = options.model.vocab_size,
                 .model = options.model_id}),
        layout_{options.model.num_layers, options.model.num_kv_heads,
                options.kv.block_size, options.model.head_dim()},
        device_pool_(static_cast<size_t>(layout_.BlockElements() *
                                         options.kv.num_device_blocks)),
        host_pool_(static_cast<size_t>(layout_.BlockElements() *
                                       options.kv.num_host_blocks)) {}

  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome);

  const CpuReferenceExecutorOptions options_;
  std::vector<float> last_logits_;
  exec_internal::SequenceTables& tables() { return tables_; }

 private:
  void CopyBlocks(const std::vector<BlockCopy>& copies,
                  exec_internal::CopyKind kind);
  // Keeps the tokens of each request's computed positions, for the drafter:
  // [history_base, history_base + size) of its sequence.
  struct History {
    int32_t base = 0;
    std::vector<TokenId> tokens;
  };
  // Appends this step's input tokens of `s` to its history.
  History& Record(const ScheduledSequence& s, const PreparedSequence& prep);
  // Verifies a speculative decode: the picked token at each of its rows,
  // the drafts accepted while they match, and the token after them.
  // Writes the logits row its token came from into last_logits() row
  // `sample`.
  SamplingParams SamplingOf(const ScheduledSequence& s) const {
    return options_.sampling ? options_.sampling(s.handle) : SamplingParams{};
  }
  void Verify(const ScheduledSequence& s, const Drafts& drafts, int32_t first_logits,
              int32_t sample, SequenceOutcome& o, std::vector<TokenId>& draft_ids);
  void Forward(const StepPlan& plan, const std::vector<PreparedSequence>& prep,
               const std::vector<Row>& rows);
  // The embeddings' part of the step: a mean-pooled chunk that does not
  // continue its sum fails alone (error in `prep`) before the forward pass;
  // after it, each hidden row joins its sum or becomes its vector.
  void CheckPoolSums(const StepPlan& plan, std::vector<PreparedSequence>& prep);
  // The encoder's part: frees, then encodes, then each sequence's span rows
  // (`inputs[i]`: entry-row pointers by position offset from its start);
  // a sequence reading an entry without output fails alone.
  void RunEncoder(const StepPlan& plan, std::vector<PreparedSequence>& prep,
                  std::vector<std::vector<const float*>>* inputs);
  void Pool(const StepPlan& plan, const std::vector<PreparedSequence>& prep,
            const std::vector<Row>& rows, StepOutcome* outcome);
  void AttentionLayer(int32_t layer, const std::vector<Row>& rows,
                      const std::vector<PreparedSequence>& prep,
                      const float* q, float* out);

  exec_internal::CpuModelWeights weights_;
  exec_internal::RopeTable rope_;
  exec_internal::SequenceTables tables_;
  KvLayout layout_;
  std::vector<float> device_pool_;
  std::vector<float> host_pool_;
  absl::flat_hash_map<RequestId, History> histories_;
  // Logits of every row that asked for them, this step, in row order.
  std::vector<float> row_logits_;
  // Final hidden states of every row that asked for them, in row order.
  std::vector<float> row_hidden_;
  absl::flat_hash_map<RequestId, PoolSum> pool_sums_;
  // Encoder outputs by cache entry (EncoderInput::entry): length x
  // hidden_size floats.
  absl::flat_hash_map<int32_t, std::vector<float>> encoder_entries_;
};

void CpuReferenceExecutor::Impl::RunEncoder(const StepPlan& plan,
                                            std::vector<PreparedSequence>& prep,
                                            std::vector<std::vector<const float*>>* inputs) {
  const int32_t d = options_.model.hidden_size;
  for (const int32_t e : plan.encoder_frees) encoder_entries_.erase(e);
  for (const EncoderInput& in : plan.encoder_inputs) {
    if (!in.encode) continue;
    encoder_entries_.erase(in.entry);
    if (!options_.encoder_content) continue;
    absl::StatusOr<std::string> content = options_.encoder_content(in.handle, in.span_index);
    if (content.ok()) encoder_entries_[in.entry] = ToyEncode(*content, in.length, d);
  }
  if (plan.encoder_inputs.empty()) return;
  inputs->assign(prep.size(), {});
  // Inputs are listed per sequence in plan order; match them up by id.
  absl::flat_hash_map<RequestId, size_t> index;
  for (size_t i = 0; i < prep.size(); ++i) index[plan.sequences[i].id] = i;
  for (const EncoderInput& in : plan.encoder_inputs) {
    const auto it = index.find(in.id);
    if (it == index.end()) continue;
    const size_t i = it->second;
    const ScheduledSequence& s = plan.sequences[i];
    if (!prep[i].error.empty()) continue;
    const auto entry = encoder_entries_.find(in.entry);
    if (entry == encoder_entries_.end() ||
        entry->second.size() != static_cast<size_t>(in.length) * static_cast<size_t>(d)) {
      prep[i].error = absl::StrFormat(
          "encoder span %d (positions [%d, %d)) reads encoder cache entry %d, which holds no "
          "output of that length%s",
          in.span_index, in.position, in.position + in.length, in.entry,
          options_.encoder_content ? "" : " (no encoder_content to encode from)");
      continue;
    }
    std::vector<const float*>& rows = (*inputs)[i];
    rows.resize(static_cast<size_t>(s.num_tokens), nullptr);
    for (int32_t p = std::max(in.position, s.start_position);
         p < std::min(in.position + in.length, s.start_position + s.num_tokens); ++p) {
      rows[static_cast<size_t>(p - s.start_position)] =
          entry->second.data() + static_cast<size_t>(p - in.position) * static_cast<size_t>(d);
    }
  }
}

CpuReferenceExecutor::Impl::History& CpuReferenceExecutor::Impl::Record(
    const ScheduledSequence& s, const PreparedSequence& prep) {
  History& h = histories_[s.id];
  // A gap (the request came back after a swap without its earlier tokens
  // passing through here) restarts the history at this step.
  if (s.start_position < h.base ||
      s.start_position > h.base + static_cast<int32_t>(h.tokens.size())) {
    h.base = s.start_position;
    h.tokens.clear();
  }
  h.tokens.resize(static_cast<size_t>(s.start_position - h.base));
  for (int32_t t = 0; t < s.num_tokens; ++t) h.tokens.push_back(prep.Input(s, t));
  return h;
}

void CpuReferenceExecutor::Impl::Verify(const ScheduledSequence& s, const Drafts& drafts,
                                        int32_t first_logits, int32_t sample,
                                        SequenceOutcome& o, std::vector<TokenId>& draft_ids) {
  const int32_t vocab = options_.model.vocab_size;
  const SamplingParams params = SamplingOf(s);
  // Row k's logits pick the token at position start + num_tokens + k.
  const auto pick = [&](int32_t row) {
    return SampleToken(absl::MakeConstSpan(row_logits_.data() + int64_t{first_logits + row} * vocab,
                                           static_cast<size_t>(vocab)),
                       params, s.start_position + s.num_tokens + row);
  };
  int32_t accepted = 0;
  TokenId token = pick(0);
  // Draft k is right when it is what the model samples after the previous
  // position; a right draft that is the stop token ends the request there.
  while (accepted < drafts.count && drafts.tokens[static_cast<size_t>(accepted)] == token &&
         !IsStopToken(token, options_.stop_token)) {
    ++accepted;
    token = pick(accepted);
  }
  o.accepted_drafts = accepted;
  o.finish = FinishReason::kNone;
  RecordSampledToken(token, IsStopToken(token, options_.stop_token), o);
  std::copy_n(row_logits_.data() + int64_t{first_logits + accepted} * vocab, vocab,
              last_logits_.data() + int64_t{sample} * vocab);
  tables_.Advance(s.id, s.start_position + s.num_tokens + accepted);
  tables_.NoteSampled(s.id, token);
  // The accepted drafts are computed positions now: the drafter sees them.
  History& h = histories_[s.id];
  h.tokens.insert(h.tokens.end(), drafts.tokens.begin(), drafts.tokens.begin() + accepted);
  draft_ids.insert(draft_ids.end(), drafts.tokens.begin(), drafts.tokens.begin() + accepted);
}

void CpuReferenceExecutor::Impl::CopyBlocks(
    const std::vector<BlockCopy>& copies, CopyKind kind) {
  const float* from =
      kind == CopyKind::kSwapIn ? host_pool_.data() : device_pool_.data();
  float* to = kind == CopyKind::kSwapOut ? host_pool_.data() : device_pool_.data();
  const int64_t n = layout_.BlockElements();
  for (const BlockCopy& c : copies) {
    std::memcpy(to + int64_t{c.target.value()} * n,
                from + int64_t{c.source.value()} * n, n * sizeof(float));
  }
}

void CpuReferenceExecutor::Impl::CheckPoolSums(const StepPlan& plan,
                                               std::vector<PreparedSequence>& prep) {
  for (size_t i = 0; i < prep.size(); ++i) {
    const ScheduledSequence& s = plan.sequences[i];
    if (!s.mean_pool || !prep[i].error.empty() || s.start_position == 0) continue;
    const auto it = pool_sums_.find(s.id);
    const int32_t end = it == pool_sums_.end() ? 0 : it->second.end;
    if (end == s.start_position) continue;
    prep[i].error = absl::StrFormat(
        "mean-pooled embedding chunk starts at position %d but its sum covers [0, %d); "
        "every position must be computed in order from 0",
        s.start_position, end);
  }
}

void CpuReferenceExecutor::Impl::Pool(const StepPlan& plan,
                                      const std::vector<PreparedSequence>& prep,
                                      const std::vector<Row>& rows, StepOutcome* outcome) {
  const int32_t d = options_.model.hidden_size;
  outcome->embedding_width = d;
  // Rows are in plan order, so each sequence's hidden rows are contiguous.
  size_t hidden = 0;
  size_t r = 0;
  for (size_t i = 0; i < prep.size(); ++i) {
    const ScheduledSequence& s = plan.sequences[i];
    const float* first = row_hidden_.data() + hidden * d;
    size_t count = 0;
    for (; r < rows.size() && rows[r].seq == static_cast<int32_t>(i); ++r) count += rows[r].hidden;
    hidden += count;
    if (!s.embed || !prep[i].error.empty()) continue;
    std::vector<float> vector;
    if (s.mean_pool) {
      PoolSum& sum = pool_sums_[s.id];
      if (s.start_position == 0) sum = PoolSum{0, std::vector<float>(static_cast<size_t>(d), 0.0f)};
      for (size_t k = 0; k < count; ++k) {
        for (int32_t j = 0; j < d; ++j) sum.sum[static_cast<size_t>(j)] += first[k * d + j];
      }
      sum.end = s.start_position + s.num_tokens;
      if (!s.pool) continue;
      vector = std::move(sum.sum);
      for (float& v : vector) v /= static_cast<float>(sum.end);
      pool_sums_.erase(s.id);
    } else {
      if (!s.pool) continue;
      vector.assign(first, first + d);
    }
    RecordEmbedding(vector, *outcome);
  }
}

absl::Status CpuReferenceExecutor::Impl::Execute(const StepPlan& plan,
                                                 StepOutcome* outcome) {
  last_logits_.clear();
  row_logits_.clear();
  row_hidden_.clear();
  absl::StatusOr<std::vector<PreparedSequence>> prepared = BeginPagedStep(
      plan, tables_,
      [&](const std::vector<BlockCopy>& copies, CopyKind kind) {
        CopyBlocks(copies, kind);
        return absl::OkStatus();
      },
      outcome);
  if (!prepared.ok()) return prepared.status();
  for (const Preemption& p : plan.preempted) {
    histories_.erase(p.id);
    pool_sums_.erase(p.id);
  }
  for (const ReleasedSequence& r : plan.released) {
    histories_.erase(r.id);
    pool_sums_.erase(r.id);
  }
  CheckPoolSums(plan, *prepared);
  std::vector<std::vector<const float*>> span_rows;
  RunEncoder(plan, *prepared, &span_rows);
  const std::vector<PreparedSequence>& prep = *prepared;
  std::vector<Row> rows;
  // Per sequence: its drafts, and the index of its first logits row.
  std::vector<Drafts> drafts(prep.size());
  std::vector<int32_t> first_logits(prep.size(), -1);
  int32_t logits_rows = 0;
  for (size_t i = 0; i < prep.size(); ++i) {
    if (!prep[i].error.empty()) {
      histories_.erase(plan.sequences[i].id);
      pool_sums_.erase(plan.sequences[i].id);
      continue;
    }
    const ScheduledSequence& s = plan.sequences[i];
    const History& history = Record(s, prep[i]);
    const auto seq = static_cast<int32_t>(i);
    for (int32_t t = 0; t < s.num_tokens; ++t) {
      const bool last = t == s.num_tokens - 1;
      const float* input = i < span_rows.size() && !span_rows[i].empty()
                               ? span_rows[i][static_cast<size_t>(t)]
                               : nullptr;
      rows.push_back({seq, s.start_position + t, prep[i].Input(s, t), s.sample && last,
                      s.mean_pool || (s.pool && last), input});
    }
    if (s.decode && s.draft_tokens > 0) {
      // Only as far as the block table and the rotary table reach.
      const int64_t room =
          std::min<int64_t>(int64_t(prep[i].table->size()) * options_.kv.block_size,
                            options_.kv.max_positions) -
          (int64_t{s.start_position} + s.num_tokens);
      const auto max = static_cast<int32_t>(
          std::clamp<int64_t>(room, 0, std::min<int32_t>(s.draft_tokens, kMaxDraftTokens)));
      drafts[i] = ProposeDrafts(history.tokens, max);
      for (int32_t d = 0; d < drafts[i].count; ++d) {
        rows.push_back({seq, s.start_position + s.num_tokens + d,
                        drafts[i].tokens[static_cast<size_t>(d)], true});
      }
    }
    if (s.sample) {
      first_logits[i] = logits_rows;
      logits_rows += 1 + drafts[i].count;
    }
  }
  if (!rows.empty()) Forward(plan, prep, rows);
  Pool(plan, prep, rows, outcome);

  const int32_t vocab = options_.model.vocab_size;
  // last_logits(): one row per sampling sequence, its first row unless a
  // speculative decode's verification picks a later one.
  std::vector<int32_t> sample_of(prep.size(), -1);
  int32_t samples = 0;
  for (size_t i = 0; i < prep.size(); ++i) {
    if (first_logits[i] < 0) continue;
    sample_of[i] = samples++;
    last_logits_.insert(last_logits_.end(),
                        row_logits_.begin() + int64_t{first_logits[i]} * vocab,
                        row_logits_.begin() + int64_t{first_logits[i] + 1} * vocab);
  }
  // The plan entry of each sampling sequence, in sample order.
  std::vector<size_t> sampled_entry;
  for (size_t i = 0; i < prep.size(); ++i) {
    if (sample_of[i] >= 0) sampled_entry.push_back(i);
  }
  FillPagedOutcome(
      plan, prep, tables_,
      [&](int32_t sample) {
        const ScheduledSequence& s = plan.sequences[sampled_entry[static_cast<size_t>(sample)]];
        return SampleToken(absl::MakeConstSpan(last_logits_.data() + int64_t{sample} * vocab,
                                               static_cast<size_t>(vocab)),
                           SamplingOf(s), s.start_position + s.num_tokens);
      },
      options_.stop_token, outcome);
  for (size_t i = 0; i < prep.size(); ++i) {
    if (drafts[i].count == 0 || first_logits[i] < 0) continue;
    Verify(plan.sequences[i], drafts[i], first_logits[i], sample_of[i], outcome->sequences[i],
           outcome->draft_ids);
  }
  return absl::OkStatus();
}

void CpuReferenceExecutor::Impl::AttentionLayer(
    int32_t layer, const std::vector<Row>& rows,
    const std::vector<PreparedSequence>& prep, const float* q, float* out) {
  const TransformerConfig& c = options_.model;
  const int32_t hd = c.head_dim();
  const int32_t group = c.num_heads / c.num_kv_heads;
  const int32_t bs = options_.kv.block_size;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> scores;
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::vector<BlockId>& table = *prep[rows[r].seq].table;
    const int32_t len = rows[r].position + 1;  // causal: positions [0, p]
    scores.resize(len);
    for (int32_t h = 0; h < c.num_heads; ++h) {
      const float* qh = q + (r * c.num_heads + h) * int64_t{hd};
      const int32_t kvh = h / group;
      float max_score = -INFINITY;
      for (int32_t j = 0; j < len; ++j) {
        const float* k = device_pool_.data() +
                         layout_.Offset(table[j / bs].value(), layer, 0, kvh, j % bs);
        float dot = 0.0f;
        for (int32_t d = 0; d < hd; ++d) dot += qh[d] * k[d];
        scores[j] = dot * scale;
        max_score = std::max(max_score, scores[j]);
      }
      float* oh = out + (r * c.num_heads + h) * int64_t{hd};
      std::fill(oh, oh + hd, 0.0f);
      float sum = 0.0f;
      for (int32_t j = 0; j < len; ++j) {
        const float w = std::exp(scores[j] - max_score);
        sum += w;
        const float* v = device_pool_.data() +
                         layout_.Offset(table[j / bs].value(), layer, 1, kvh, j % bs);
        for (int32_t d = 0; d < hd; ++d) oh[d] += w * v[d];
      }
      const float inv = 1.0f / sum;
      for (int32_t d = 0; d < hd; ++d) oh[d] *= inv;
    }
  }
}

void CpuReferenceExecutor::Impl::Forward(
    const StepPlan& plan, const std::vector<PreparedSequence>& prep,
    const std::vector<Row>& rows) {
  const TransformerConfig& c = options_.model;
  const int64_t n = static_cast<int64_t>(rows.size());
  const int32_t d = c.hidden_size;
  const int32_t hd = c.head_dim();
  const int32_t qw = c.num_heads * hd;
  const int32_t kvw = c.num_kv_heads * hd;
  const int32_t bs = options_.kv.block_size;
  std::vector<float> x(n * d), h(n * d), q(n * qw), k(n * kvw), v(n * kvw),
      attn(n * qw), gate(n * c.mlp_hidden), up(n * c.mlp_hidden), tmp(n * d);
  for (int64_t r = 0; r < n; ++r) {
    std::copy_n(rows[r].input != nullptr ? rows[r].input
                                         : weights_.embedding.data() + int64_t{rows[r].token} * d,
                d, x.data() + r * d);
  }
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const exec_internal::CpuLayerWeights& w = weights_.layers[l];
    exec_internal::RmsNormRows(x.data(), n, d, w.attn_norm.data(), c.rms_eps,
                               h.data());
    exec_internal::MatMulRows(h.data(), n, d, w.wq.data(), qw, q.data());
    exec_internal::MatMulRows(h.data(), n, d, w.wk.data(), kvw, k.data());
    exec_internal::MatMulRows(h.data(), n, d, w.wv.data(), kvw, v.data());
    // Rotate, then write this step's K/V into the pages before attention
    // reads them: causal attention within a chunk sees its own positions.
    for (int64_t r = 0; r < n; ++r) {
      const int32_t p = rows[r].position;
      exec_internal::ApplyRope(q.data() + r * qw, c.num_heads, hd, p, rope_);
      exec_internal::ApplyRope(k.data() + r * kvw, c.num_kv_heads, hd, p, rope_);
      const BlockId block = (*prep[rows[r].seq].table)[p / bs];
      for (int32_t kh = 0; kh < c.num_kv_heads; ++kh) {
        std::copy_n(k.data() + r * kvw + kh * hd, hd,
                    device_pool_.data() + layout_.Offset(block.value(), l, 0, kh, p % bs));
        std::copy_n(v.data() + r * kvw + kh * hd, hd,
                    device_pool_.data() + layout_.Offset(block.value(), l, 1, kh, p % bs));
      }
    }
    AttentionLayer(l, rows, prep, q.data(), attn.data());
    exec_internal::MatMulRows(attn.data(), n, qw, w.wo.data(), d, tmp.data());
    for (int64_t i = 0; i < n * d; ++i) x[i] += tmp[i];
    exec_internal::RmsNormRows(x.data(), n, d, w.mlp_norm.data(), c.rms_eps,
                               h.data());
    exec_internal::MatMulRows(h.data(), n, d, w.w_gate.data(), c.mlp_hidden,
                              gate.data());
    exec_internal::MatMulRows(h.data(), n, d, w.w_up.data(), c.mlp_hidden,
                              up.data());
    exec_internal::SiluGate(gate.data(), up.data(), n * c.mlp_hidden);
    exec_internal::MatMulRows(gate.data(), n, c.mlp_hidden, w.w_down.data(), d,
                              tmp.data());
    for (int64_t i = 0; i < n * d; ++i) x[i] += tmp[i];
  }
  // Logits and hidden states only for the rows that asked (Row::logits,
  // Row::hidden), in row order.
  for (int64_t r = 0; r < n; ++r) {
    if (!rows[r].logits && !rows[r].hidden) continue;
    exec_internal::RmsNormRows(x.data() + r * d, 1, d, weights_.final_norm.data(),
                               c.rms_eps, h.data());
    if (rows[r].hidden) row_hidden_.insert(row_hidden_.end(), h.data(), h.data() + d);
    if (!rows[r].logits) continue;
    const size_t at = row_logits_.size();
    row_logits_.resize(at + c.vocab_size);
    exec_internal::MatMulRows(h.data(), 1, d, weights_.lm_head.data(),
                              c.vocab_size, row_logits_.data() + at);
  }
}

absl::StatusOr<std::unique_ptr<CpuReferenceExecutor>>
CpuReferenceExecutor::Create(const CpuReferenceExecutorOptions& options) {
  absl::Status s = ValidateTransformerConfig(options.model);
  if (s.ok()) s = ValidateExecutorKvConfig(options.kv);
  if (!s.ok()) return s;
  if (options.model.dtype != DType::kFloat32) {
    return absl::InvalidArgumentError(
        "model.dtype: the CPU reference executor computes in float32 only "
        "(DType::kFloat32)");
  }
  if (s = ValidateStopToken(options.stop_token, options.model.vocab_size); !s.ok()) return s;
  if (ParameterCount(options.model) > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "model: %d parameters; the CPU reference executor allows at most 2^30",
        ParameterCount(options.model)));
  }
  const int64_t pool_bytes =
      KvBytesPerToken(options.model) * options.kv.block_size *
      (int64_t{options.kv.num_device_blocks} + options.kv.num_host_blocks);
  if (pool_bytes > (int64_t{8} << 30)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kv: the pools would take %d bytes; the CPU reference executor "
        "allows at most 8 GiB",
        pool_bytes));
  }
  auto impl = std::make_unique<Impl>(options,
                                     exec_internal::MakeCpuWeights(options.model));
  return std::unique_ptr<CpuReferenceExecutor>(
      new CpuReferenceExecutor(std::move(impl)));
}

CpuReferenceExecutor::CpuReferenceExecutor(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
CpuReferenceExecutor::~CpuReferenceExecutor() = default;

absl::Status CpuReferenceExecutor::Execute(const StepPlan& plan,
                                           StepOutcome* outcome) {
  if (outcome == nullptr) {
    return absl::InvalidArgumentError("Execute: outcome must not be null");
  }
  return impl_->Execute(plan, outcome);
}

const std::vector<float>& CpuReferenceExecutor::last_logits() const {
  return impl_->last_logits_;
}


size_t CpuReferenceExecutor::num_live_sequences() const {
  return impl_->tables().size();
}

const CpuReferenceExecutorOptions& CpuReferenceExecutor::options() const {
  return impl_->options_;
}

}  // namespace hearth

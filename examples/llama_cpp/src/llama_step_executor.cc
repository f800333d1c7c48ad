#include "hearth_llama_cpp/llama_step_executor.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hearth/exec/step_outcome_fill.h"
#include "hearth_llama_cpp/greedy.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "kv_cell_map.h"
#include "swap_store.h"

namespace hearth::llama_cpp {

absl::StatusOr<std::unique_ptr<LlamaStepExecutor>> LlamaStepExecutor::Create(
    llama_context* ctx, LlamaExecutorOptions options) {
  if (ctx == nullptr) return absl::InvalidArgumentError("llama context is null");
  if (options.block_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "LlamaExecutorOptions.block_size is ", options.block_size,
        "; must be Hearth's kv.block_size, or 0 without prefix caching"));
  }
  return std::unique_ptr<LlamaStepExecutor>(new LlamaStepExecutor(ctx, options));
}

LlamaStepExecutor::LlamaStepExecutor(llama_context* ctx, LlamaExecutorOptions options)
    : ctx_(ctx),
      vocab_(llama_model_get_vocab(llama_get_model(ctx))),
      n_batch_(static_cast<int32_t>(llama_n_batch(ctx))),
      n_vocab_(llama_vocab_n_tokens(vocab_)),
      batch_(llama_batch_init(n_batch_, /*embd=*/0, /*n_seq_max=*/1)),
      streams_(KvStreams(ctx) > 1),
      block_size_(options.block_size),
      sampling_(std::move(options.sampling)),
      swaps_(std::make_unique<SwapStore>()) {
  llama_memory_clear(llama_get_memory(ctx_), /*data=*/true);
  const int32_t n_seq = static_cast<int32_t>(llama_n_seq_max(ctx_));
  if (block_size_ > 0) {
    cells_ = std::make_unique<KvCellMap>(llama_get_memory(ctx_), block_size_, n_seq, streams_);
  } else {
    // Handed out from the back: lowest ids first.
    for (int32_t s = n_seq - 1; s >= 0; --s) free_seq_ids_.push_back(s);
  }
  slots_.reserve(static_cast<size_t>(n_seq));
}

LlamaStepExecutor::~LlamaStepExecutor() { llama_batch_free(batch_); }

std::optional<llama_seq_id> LlamaStepExecutor::TakeSeqId() {
  if (cells_ != nullptr) return cells_->TakeSeqId();
  if (free_seq_ids_.empty()) return std::nullopt;
  // The lowest id: on per-sequence streams llama.cpp runs only sequences of
  // consecutive ids in one forward pass (llama_batch_allocr::split_equal),
  // so running ids kept dense keep a decode batch one pass.
  auto lowest = std::min_element(free_seq_ids_.begin(), free_seq_ids_.end());
  std::iter_swap(lowest, free_seq_ids_.end() - 1);
  const llama_seq_id seq = free_seq_ids_.back();
  free_seq_ids_.pop_back();
  return seq;
}

void LlamaStepExecutor::Drop(RequestId id, bool keep) {
  auto it = slots_.find(id);
  if (it == slots_.end()) return;
  const llama_seq_id seq = it->second.seq;
  slots_.erase(it);
  if (cells_ != nullptr) {
    keep ? cells_->Retain(seq) : cells_->Forget(seq);
    return;
  }
  // Removing a whole sequence never fails (llama.h).
  llama_memory_seq_rm(llama_get_memory(ctx_), seq, -1, -1);
  free_seq_ids_.push_back(seq);
}

absl::Status LlamaStepExecutor::CheckTokens(const ScheduledSequence& s) const {
  if (s.num_tokens < 1 || static_cast<int32_t>(s.token_ids.size()) != s.num_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request ", s.id.ToString(), " has ", s.token_ids.size(), " token ids for ",
        s.num_tokens, " positions; submit requests with prompt_token_ids"));
  }
  for (int32_t t : s.token_ids) {
    if (t < 0 || t >= n_vocab_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", s.id.ToString(), " has token id ", t, "; vocabulary is [0, ", n_vocab_, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status LlamaStepExecutor::Admit(const StepPlan& plan, const ScheduledSequence& s) {
  if (s.input_pending) {
    // Overlapped planning: the input is the token this executor sampled for
    // it in the step before.
    auto it = slots_.find(s.id);
    if (s.num_tokens != 1 || !s.token_ids.empty() || it == slots_.end() ||
        it->second.sampled < 0 || it->second.next_pos != s.start_position) {
      return absl::FailedPreconditionError(absl::StrCat(
          "request ", s.id.ToString(), " decodes a pending token at position ",
          s.start_position, ", but its previous step sampled none there here"));
    }
    return absl::OkStatus();
  }
  if (absl::Status tokens = CheckTokens(s); !tokens.ok()) return tokens;
  // No encoder here: a photo's positions would be computed from its
  // placeholder ids, a wrong answer given as a right one.
  for (const EncoderInput& in : plan.encoder_inputs) {
    if (in.id == s.id) {
      return absl::UnimplementedError(
          "this llama.cpp engine runs no encoder (RequestSpec::encoder_spans, a photo's "
          "tokens) yet; the CPU reference executor does");
    }
  }
  auto it = slots_.find(s.id);
  if (auto failed = swap_errors_.find(s.id); failed != swap_errors_.end() && it == slots_.end()) {
    return absl::FailedPreconditionError(failed->second);
  }
  if (s.mean_pool && s.start_position != 0 &&
      (it == slots_.end() || it->second.pool_sum.empty())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "mean-pooled embedding ", s.id.ToString(), " starts at position ", s.start_position,
        " but this executor holds no sum of its earlier positions; every position must be "
        "computed in order from 0"));
  }
  if (it == slots_.end()) {
    if (s.start_position != 0 && cells_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "request ", s.id.ToString(), " starts at position ", s.start_position,
          " but llama.cpp holds none of its KV (prefix caching needs "
          "LlamaExecutorOptions::block_size)"));
    }
    if (s.start_position != 0 && !s.full_block_table) {
      return absl::FailedPreconditionError(absl::StrCat(
          "request ", s.id.ToString(), " is new here but its entry has no full block table"));
    }
    BlockId cow_source;
    for (const BlockCopy& c : plan.copy_on_write) {
      if (c.id == s.id) cow_source = c.source;
    }
    const std::optional<llama_seq_id> seq =
        s.start_position > 0 ? cells_->TakeSeqIdForHit(s.block_table, s.start_position, cow_source)
                             : TakeSeqId();
    if (!seq.has_value()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "no free llama sequence id for request ", s.id.ToString(),
          "; max_running must not exceed n_seq_max"));
    }
    it = slots_.emplace(s.id, Slot{*seq, s.start_position}).first;
  }
  if (s.start_position != it->second.next_pos) {
    return absl::FailedPreconditionError(absl::StrCat(
        "request ", s.id.ToString(), " starts at position ", s.start_position,
        "; llama.cpp expects ", it->second.next_pos));
  }
  if (cells_ != nullptr) {
    cells_->Claim(it->second.seq, s.block_table, s.start_position,
                  s.start_position + s.num_tokens, s.token_ids, it->second.sampled);
  }
  return absl::OkStatus();
}

absl::Status LlamaStepExecutor::RunRepairs(const StepPlan& plan, StepOutcome* outcome) {
  std::vector<KvCellMap::Repair>& repairs = cells_->repairs();
  // Positions in order, n_batch at a time (a sequence's positions may span
  // batches: each continues where the one before left its cells).
  size_t r = 0, k = 0;
  while (r < repairs.size()) {
    batch_.n_tokens = 0;
    std::vector<llama_seq_id> in_batch;
    while (r < repairs.size() && batch_.n_tokens < n_batch_) {
      const KvCellMap::Repair& rep = repairs[r];
      const int32_t j = batch_.n_tokens++;
      batch_.token[j] = rep.tokens[k];
      batch_.pos[j] = rep.begin + static_cast<int32_t>(k);
      batch_.n_seq_id[j] = 1;
      batch_.seq_id[j][0] = rep.seq;
      batch_.logits[j] = false;
      if (in_batch.empty() || in_batch.back() != rep.seq) in_batch.push_back(rep.seq);
      if (++k == rep.tokens.size()) {
        k = 0;
        ++r;
      }
    }
    const int32_t rc = llama_decode(ctx_, batch_);
    if (rc == 0) continue;
    if (rc != 1) {
      repairs.clear();
      return absl::InternalError(absl::StrCat("llama_decode returned ", rc,
                                              " recomputing evicted prefix-cache positions"));
    }
    // No KV even for these: their sequences are reported out of KV (Hearth
    // preempts them; the cells they had are gone).
    for (size_t i = 0; i < plan.sequences.size(); ++i) {
      const auto slot = slots_.find(plan.sequences[i].id);
      if (!entries_[i].active || slot == slots_.end() ||
          std::find(in_batch.begin(), in_batch.end(), slot->second.seq) == in_batch.end()) {
        continue;
      }
      entries_[i].active = false;
      outcome->sequences[i].out_of_kv = true;
      Drop(plan.sequences[i].id);
      ++stats_.evictions;
    }
    // The rest of those sequences' repairs has nowhere to go.
    while (r < repairs.size() &&
           std::find(in_batch.begin(), in_batch.end(), repairs[r].seq) != in_batch.end()) {
      ++r;
      k = 0;
    }
  }
  repairs.clear();
  return absl::OkStatus();
}

void LlamaStepExecutor::OrderBatch(const StepPlan& plan) {
  order_.clear();
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    if (entries_[i].active) order_.push_back(i);
  }
  if (!streams_) return;
  // Ascending sequence ids: split_equal takes consecutive ids into one
  // forward pass only when the batch lists them in that order.
  std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
    return slots_.at(plan.sequences[a].id).seq < slots_.at(plan.sequences[b].id).seq;
  });
}

void LlamaStepExecutor::BuildBatch(const StepPlan& plan, bool embed) {
  batch_.n_tokens = 0;
  OrderBatch(plan);
  for (size_t i : order_) {
    const ScheduledSequence& s = plan.sequences[i];
    if (s.embed != embed) continue;
    const Slot& slot = slots_.at(s.id);
    entries_[i].batch_begin = batch_.n_tokens;
    for (int32_t k = 0; k < s.num_tokens; ++k) {
      const int32_t j = batch_.n_tokens++;
      batch_.token[j] = s.input_pending ? slot.sampled : s.token_ids[k];
      batch_.pos[j] = s.start_position + k;
      batch_.n_seq_id[j] = 1;
      batch_.seq_id[j][0] = slot.seq;
      const bool last = k + 1 == s.num_tokens;
      batch_.logits[j] = embed ? s.mean_pool || (s.pool && last) : s.sample && last;
    }
  }
}

void LlamaStepExecutor::PoolEmbeddings(const StepPlan& plan, StepOutcome* outcome) {
  const int32_t width = llama_model_n_embd(llama_get_model(ctx_));
  outcome->embedding_width = width;
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    const ScheduledSequence& s = plan.sequences[i];
    if (!s.embed || !entries_[i].active) continue;
    Slot& slot = slots_.at(s.id);
    const auto row = [&](int32_t k) {
      return llama_get_embeddings_ith(ctx_, entries_[i].batch_begin + k);
    };
    std::vector<float> vector;
    if (s.mean_pool) {
      if (s.start_position == 0) slot.pool_sum.assign(static_cast<size_t>(width), 0.0f);
      for (int32_t k = 0; k < s.num_tokens; ++k) {
        const float* h = row(k);
        if (h == nullptr) continue;
        for (int32_t e = 0; e < width; ++e) slot.pool_sum[static_cast<size_t>(e)] += h[e];
      }
      if (!s.pool) continue;
      vector = std::move(slot.pool_sum);
      slot.pool_sum.clear();
      const auto positions = static_cast<float>(s.start_position + s.num_tokens);
      for (float& v : vector) v /= positions;
    } else {
      if (!s.pool) continue;
      const float* h = row(s.num_tokens - 1);
      if (h != nullptr) vector.assign(h, h + width);
    }
    if (vector.size() != static_cast<size_t>(width)) {
      outcome->sequences[i].error = "llama.cpp returned no embedding for the pooling position";
      entries_[i].active = false;
      Drop(s.id);
      continue;
    }
    RecordEmbedding(vector, *outcome);
  }
}

absl::Status LlamaStepExecutor::DecodeWithEvictions(const StepPlan& plan,
                                                    StepOutcome* outcome, bool embed) {
  while (true) {
    BuildBatch(plan, embed);
    if (batch_.n_tokens == 0) return absl::OkStatus();
    stats_.max_batch_tokens = std::max(stats_.max_batch_tokens, batch_.n_tokens);
    const absl::Time start = absl::Now();
    const int32_t rc = llama_decode(ctx_, batch_);
    stats_.decode_time += absl::Now() - start;
    ++stats_.decode_calls;
    if (rc == 0) return absl::OkStatus();
    if (rc != 1) {
      return absl::InternalError(absl::StrCat("llama_decode returned ", rc, " for a batch of ",
                                              batch_.n_tokens, " tokens"));
    }
    // No KV slot; llama.cpp rolled the batch back. Evict the newest
    // sequence of this pass (plan order ends with admissions) and retry the
    // rest.
    ++stats_.out_of_kv_returns;
    for (size_t i = plan.sequences.size(); i-- > 0;) {
      if (!entries_[i].active || plan.sequences[i].embed != embed) continue;
      entries_[i].active = false;
      outcome->sequences[i].out_of_kv = true;
      Drop(plan.sequences[i].id);
      ++stats_.evictions;
      break;
    }
  }
}

void LlamaStepExecutor::Finish(const StepPlan& plan, StepOutcome* outcome) {
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    if (!entries_[i].active) continue;
    const ScheduledSequence& s = plan.sequences[i];
    Slot& slot = slots_.at(s.id);
    slot.next_pos = s.start_position + s.num_tokens;
    slot.sampled = -1;
    if (!s.sample) continue;
    const float* row = llama_get_logits_ith(ctx_, entries_[i].batch_begin + s.num_tokens - 1);
    absl::Span<const float> logits(row, static_cast<size_t>(n_vocab_));
    const TokenId token =
        sampling_ ? SampleToken(logits, sampling_(s.handle), s.start_position + s.num_tokens)
                  : PickGreedy(logits).token;
    slot.sampled = token;
    RecordSampledToken(token, llama_vocab_is_eog(vocab_, token), outcome->sequences[i]);
    if (observer_) observer_(s.id, logits);
  }
}

// Runs of one request's copies: Hearth lists a request's blocks together.
template <typename F>
void ForEachRequest(const std::vector<BlockCopy>& copies, F f) {
  for (size_t i = 0; i < copies.size();) {
    size_t j = i;
    while (j < copies.size() && copies[j].id == copies[i].id) ++j;
    f(copies[i].id, absl::MakeConstSpan(copies).subspan(i, j - i));
    i = j;
  }
}

void LlamaStepExecutor::SwapOut(const StepPlan& plan) {
  ForEachRequest(plan.swap_out, [&](RequestId id, absl::Span<const BlockCopy> copies) {
    auto it = slots_.find(id);
    // No slot (nothing of it is in llama.cpp) or a failed save leaves no
    // record: its swap-in then fails the sequence, which Hearth retries.
    if (it == slots_.end()) return;
    const absl::Time start = absl::Now();
    std::vector<BlockId> host, device;
    for (const BlockCopy& c : copies) {
      host.push_back(c.target);
      device.push_back(c.source);
    }
    const int32_t positions = it->second.next_pos;
    std::vector<TokenId> tokens;
    if (cells_ != nullptr) tokens = cells_->TokensOfTable(device, positions);
    if (swaps_->Save(ctx_, it->second.seq, std::move(host), positions, std::move(tokens)).ok()) {
      ++stats_.swapped_out;
    }
    stats_.swap_time += absl::Now() - start;
  });
  stats_.swap_bytes = swaps_->bytes();
}

void LlamaStepExecutor::SwapInOne(const StepPlan& plan, RequestId id,
                                  absl::Span<const BlockCopy> copies) {
  swap_blocks_.clear();
  for (const BlockCopy& c : copies) swap_blocks_.push_back(c.source);
  absl::StatusOr<SwapStore::Saved> saved = swaps_->Take(id, swap_blocks_);
  if (!saved.ok()) {
    swap_errors_[id] = std::string(saved.status().message());
    return;
  }
  Drop(id);
  const std::optional<llama_seq_id> seq = TakeSeqId();
  absl::Status restored = seq.has_value()
                              ? SwapStore::Restore(ctx_, *saved, *seq)
                              : absl::ResourceExhaustedError(absl::StrCat(
                                    "no free llama sequence id to swap request ", id.ToString(),
                                    " in; max_running must not exceed n_seq_max"));
  if (!restored.ok()) {
    if (seq.has_value()) cells_ != nullptr ? cells_->Forget(*seq) : free_seq_ids_.push_back(*seq);
    swap_errors_[id] = std::string(restored.message());
    return;
  }
  int32_t next = saved->positions;
  // Hearth resumes at the positions it counted as computed; cells past them
  // (none, normally) are dropped so the positions continue.
  for (const ScheduledSequence& s : plan.sequences) {
    if (s.id == id && s.start_position < next) next = s.start_position;
  }
  llama_memory_seq_rm(llama_get_memory(ctx_), *seq, next, -1);
  slots_.emplace(id, Slot{*seq, next});
  if (cells_ != nullptr) {
    swap_blocks_.clear();
    for (const BlockCopy& c : copies) swap_blocks_.push_back(c.target);
    saved->tokens.resize(static_cast<size_t>(next));
    cells_->Claim(*seq, swap_blocks_, 0, next, saved->tokens, -1);
  }
  ++stats_.swapped_in;
}

void LlamaStepExecutor::SwapIn(const StepPlan& plan) {
  swap_errors_.clear();
  const absl::Time start = absl::Now();
  ForEachRequest(plan.swap_in, [&](RequestId id, absl::Span<const BlockCopy> copies) {
    SwapInOne(plan, id, copies);
  });
  stats_.swap_time += absl::Now() - start;
  stats_.swap_bytes = swaps_->bytes();
}

absl::Status LlamaStepExecutor::Execute(const StepPlan& plan, StepOutcome* outcome) {
  const absl::Time begin = absl::Now();
  const absl::Duration decode_before = stats_.decode_time;
  StartStepOutcome(plan, outcome);
  ++stats_.steps;
  if (!plan.copy_on_write.empty() && cells_ == nullptr) {
    return absl::FailedPreconditionError(
        "the llama.cpp executor copies KV blocks on write only with prefix caching; "
        "set LlamaExecutorOptions::block_size to Hearth's kv.block_size");
  }
  SwapOut(plan);
  for (const Preemption& p : plan.preempted) Drop(p.id, /*keep=*/true);
  for (const ReleasedSequence& r : plan.released) Drop(r.id, /*keep=*/true);
  SwapIn(plan);
  if (plan.num_batched_tokens > n_batch_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan has ", plan.num_batched_tokens, " tokens; llama.cpp's n_batch is ", n_batch_,
        " (max_batched_tokens must not exceed it)"));
  }
  entries_.assign(plan.sequences.size(), Entry{});
  outcome->sequences.resize(plan.sequences.size());
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    SequenceOutcome& o = outcome->sequences[i];
    o.id = plan.sequences[i].id;
    absl::Status admitted = Admit(plan, plan.sequences[i]);
    if (admitted.ok()) {
      entries_[i].active = true;
    } else {
      o.error = std::string(admitted.message());
      Drop(o.id);
    }
  }
  absl::Status decoded = absl::OkStatus();
  if (cells_ != nullptr) {
    decoded = RunRepairs(plan, outcome);
    const KvCellMap::Stats& c = cells_->stats();
    stats_.prefix_shared_positions = c.shared_positions;
    stats_.prefix_repaired_positions = c.repaired_positions;
    stats_.retained_evictions = c.evictions;
    stats_.prefix_stream_copies = c.stream_copies;
    stats_.prefix_stream_reuses = c.stream_reuses;
  }
  const bool embeddings = std::any_of(plan.sequences.begin(), plan.sequences.end(),
                                      [](const ScheduledSequence& s) { return s.embed; });
  if (decoded.ok() && embeddings) {
    llama_set_embeddings(ctx_, true);
    decoded = DecodeWithEvictions(plan, outcome, /*embed=*/true);
    if (decoded.ok()) PoolEmbeddings(plan, outcome);
    llama_set_embeddings(ctx_, false);
  }
  if (decoded.ok()) decoded = DecodeWithEvictions(plan, outcome, /*embed=*/false);
  if (decoded.ok()) Finish(plan, outcome);
  if (!decoded.ok()) outcome->embeddings.clear();
  stats_.mapping_time += (absl::Now() - begin) - (stats_.decode_time - decode_before);
  return decoded;
}

}  // namespace hearth::llama_cpp

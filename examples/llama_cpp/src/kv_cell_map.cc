#include "kv_cell_map.h"

#include <algorithm>

namespace hearth::llama_cpp {

KvCellMap::KvCellMap(llama_memory_t memory, int32_t block_size, int32_t num_seq_ids,
                     bool streams)
    : memory_(memory),
      block_size_(block_size),
      streams_(streams),
      seqs_(static_cast<size_t>(num_seq_ids)) {
  // Handed out from the back: lowest ids first.
  for (int32_t s = num_seq_ids - 1; s >= 0; --s) free_.push_back(s);
}

KvCellMap::Holder& KvCellMap::HolderOf(BlockId b) {
  const size_t i = b.value();
  if (i >= holders_.size()) {
    holders_.resize(i + 1);
    block_tokens_.resize((i + 1) * static_cast<size_t>(block_size_), 0);
  }
  return holders_[i];
}

TokenId* KvCellMap::TokensOf(BlockId b) {
  HolderOf(b);
  return block_tokens_.data() + static_cast<size_t>(b.value()) * static_cast<size_t>(block_size_);
}

std::vector<TokenId> KvCellMap::TokensOfTable(absl::Span<const BlockId> table,
                                              int32_t positions) {
  std::vector<TokenId> tokens;
  for (size_t k = 0; k < table.size() && static_cast<int32_t>(tokens.size()) < positions; ++k) {
    const TokenId* from = TokensOf(table[k]);
    const int32_t len = std::min(block_size_, positions - static_cast<int32_t>(tokens.size()));
    tokens.insert(tokens.end(), from, from + len);
  }
  return tokens;
}

std::optional<llama_seq_id> KvCellMap::TakeSeqId() {
  if (free_.empty()) {
    if (retained_.empty()) return std::nullopt;
    ++stats_.evictions;
    Forget(retained_.front());
  }
  // The lowest: on streams, consecutive running ids share a forward pass.
  std::iter_swap(std::min_element(free_.begin(), free_.end()), free_.end() - 1);
  const llama_seq_id seq = free_.back();
  free_.pop_back();
  seqs_[static_cast<size_t>(seq)].live = true;
  return seq;
}

void KvCellMap::Retain(llama_seq_id seq) {
  SeqState& s = seqs_[static_cast<size_t>(seq)];
  s.live = false;
  if (s.num_held == 0) {
    Forget(seq);
    return;
  }
  s.retained = true;
  retained_.push_back(seq);
}

void KvCellMap::Forget(llama_seq_id seq) {
  // Removing a whole sequence never fails (llama.h).
  llama_memory_seq_rm(memory_, seq, -1, -1);
  SeqState& s = seqs_[static_cast<size_t>(seq)];
  for (BlockId b : s.held) {
    Holder& h = HolderOf(b);
    if (h.seq == seq) h = Holder{};
  }
  Free(seq);
}

void KvCellMap::Free(llama_seq_id seq) {
  SeqState& s = seqs_[static_cast<size_t>(seq)];
  if (s.retained) retained_.erase(std::find(retained_.begin(), retained_.end(), seq));
  s = SeqState{};
  free_.push_back(seq);
}

void KvCellMap::Release(llama_seq_id seq, BlockId b) {
  SeqState& s = seqs_[static_cast<size_t>(seq)];
  --s.num_held;
  if (!s.retained) return;
  if (s.num_held == 0) {
    Forget(seq);
    return;
  }
  // A stream's cells are its own: dropping some frees nothing for others,
  // and would leave a hole a later copy of its prefix cannot use.
  if (streams_) return;
  const Holder& h = HolderOf(b);
  // A retained sequence never runs again: only its membership of these
  // cells goes (sequences sharing them keep theirs).
  llama_memory_seq_rm(memory_, seq, h.index * block_size_, (h.index + 1) * block_size_);
}

void KvCellMap::SetHolder(BlockId b, llama_seq_id seq, int32_t index) {
  Holder& h = HolderOf(b);
  if (h.seq == seq && h.index == index) return;
  if (h.seq >= 0) Release(h.seq, b);
  Holder& now = HolderOf(b);
  now = Holder{seq, index};
  SeqState& s = seqs_[static_cast<size_t>(seq)];
  s.held.push_back(b);
  ++s.num_held;
}

void KvCellMap::Attach(llama_seq_id seq, absl::Span<const BlockId> table, int32_t start,
                       BlockId cow_source) {
  if (streams_) {
    AttachStream(seq, table, start, cow_source);
    return;
  }
  std::vector<Repair>* repairs = &repairs_;
  const int32_t blocks = (start + block_size_ - 1) / block_size_;
  for (int32_t k = 0; k < blocks && static_cast<size_t>(k) < table.size(); ++k) {
    const int32_t from = k * block_size_;
    const int32_t to = std::min(from + block_size_, start);
    const bool partial = to - from < block_size_;
    const BlockId dst = table[static_cast<size_t>(k)];
    const BlockId src = partial && cow_source.valid() ? cow_source : dst;
    const Holder h = HolderOf(src);
    if (h.seq >= 0 && h.index == k) {
      llama_memory_seq_cp(memory_, h.seq, seq, from, to);
      stats_.shared_positions += static_cast<uint64_t>(to - from);
    } else {
      const TokenId* tokens = TokensOf(src);
      if (repairs->empty() || repairs->back().seq != seq) repairs->push_back({seq, from, {}});
      repairs->back().tokens.insert(repairs->back().tokens.end(), tokens, tokens + (to - from));
      stats_.repaired_positions += static_cast<uint64_t>(to - from);
    }
    if (partial) {
      // The private copy of the last block starts with the source's tokens;
      // Claim records the rest as the sequence computes them.
      if (src != dst) std::copy_n(TokensOf(src), to - from, TokensOf(dst));
    } else {
      SetHolder(dst, seq, k);
    }
  }
}

void KvCellMap::Claim(llama_seq_id seq, absl::Span<const BlockId> table, int32_t begin,
                      int32_t end, absl::Span<const TokenId> tokens, TokenId pending) {
  if (streams_) RecordHistory(seq, begin, end, tokens, pending);
  int32_t claimed = -1;
  for (int32_t p = begin; p < end; ++p) {
    const int32_t k = p / block_size_;
    if (static_cast<size_t>(k) >= table.size()) return;
    const BlockId b = table[static_cast<size_t>(k)];
    if (k != claimed) {
      SetHolder(b, seq, k);
      claimed = k;
    }
    TokensOf(b)[p % block_size_] =
        tokens.empty() ? pending : tokens[static_cast<size_t>(p - begin)];
  }
}

}  // namespace hearth::llama_cpp

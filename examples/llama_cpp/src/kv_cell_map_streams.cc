// KvCellMap on per-sequence streams: a prefix-cache hit takes over the
// stream of the retained sequence that shares the longest prefix with it,
// or copies a live one's whole stream, then drops the positions past that
// prefix and recomputes what is left of the hit. (kv_cell_map.h says why.)

#include <algorithm>

#include "kv_cell_map.h"

namespace hearth::llama_cpp {

std::vector<TokenId> KvCellMap::HitTokens(absl::Span<const BlockId> table, int32_t start,
                                          BlockId cow_source) {
  std::vector<TokenId> tokens;
  tokens.reserve(static_cast<size_t>(start));
  const int32_t blocks = (start + block_size_ - 1) / block_size_;
  for (int32_t k = 0; k < blocks && static_cast<size_t>(k) < table.size(); ++k) {
    const int32_t len = std::min(block_size_, start - k * block_size_);
    const BlockId dst = table[static_cast<size_t>(k)];
    const BlockId src = len < block_size_ && cow_source.valid() ? cow_source : dst;
    const TokenId* from = TokensOf(src);
    tokens.insert(tokens.end(), from, from + len);
    // The private copy of a partial last block starts with its source's
    // tokens; Claim records the rest as the sequence computes them.
    if (src != dst) std::copy_n(from, len, TokensOf(dst));
  }
  return tokens;
}

KvCellMap::Source KvCellMap::LongestPrefix(llama_seq_id seq,
                                           absl::Span<const TokenId> tokens) const {
  Source best;
  for (size_t i = 0; i < seqs_.size(); ++i) {
    const SeqState& s = seqs_[i];
    const auto id = static_cast<llama_seq_id>(i);
    if (id == seq || (!s.live && !s.retained) || s.history.empty()) continue;
    // Only positions whose cells exist: a live sequence's history already
    // holds what this step is about to compute for it.
    const llama_pos held = llama_memory_seq_pos_max(memory_, id) + 1;
    const size_t most = std::min({tokens.size(), s.history.size(), static_cast<size_t>(held)});
    const auto shared = static_cast<int32_t>(
        std::mismatch(tokens.begin(), tokens.begin() + static_cast<ptrdiff_t>(most),
                      s.history.begin())
            .first -
        tokens.begin());
    if (shared > best.shared) best = Source{id, shared};
  }
  return best;
}

void KvCellMap::AttachStream(llama_seq_id seq, absl::Span<const BlockId> table, int32_t start,
                             BlockId cow_source) {
  std::vector<TokenId> tokens = HitTokens(table, start, cow_source);
  Source source = LongestPrefix(seq, tokens);
  // A stream copy moves every cell of the stream; below a block of shared
  // positions recomputing them is the cheaper way.
  if (source.shared < block_size_) source = Source{};
  if (source.seq >= 0) {
    llama_memory_seq_cp(memory_, source.seq, seq, -1, -1);
    llama_memory_seq_rm(memory_, seq, source.shared, -1);
    ++stats_.stream_copies;
    stats_.shared_positions += static_cast<uint64_t>(source.shared);
  }
  FinishStreamHit(seq, source.shared, std::move(tokens), table);
}

void KvCellMap::FinishStreamHit(llama_seq_id seq, int32_t shared, std::vector<TokenId> tokens,
                                absl::Span<const BlockId> table) {
  const auto total = static_cast<int32_t>(tokens.size());
  if (shared < total) {
    repairs_.push_back({seq, shared, std::vector<TokenId>(tokens.begin() + shared, tokens.end())});
    stats_.repaired_positions += static_cast<uint64_t>(total - shared);
  }
  for (int32_t k = 0; (k + 1) * block_size_ <= total; ++k) {
    SetHolder(table[static_cast<size_t>(k)], seq, k);
  }
  seqs_[static_cast<size_t>(seq)].history = std::move(tokens);
}

void KvCellMap::TakeOver(const Source& source, std::vector<TokenId> tokens,
                         absl::Span<const BlockId> table) {
  SeqState& s = seqs_[static_cast<size_t>(source.seq)];
  retained_.erase(std::find(retained_.begin(), retained_.end(), source.seq));
  s.retained = false;
  s.live = true;
  llama_memory_seq_rm(memory_, source.seq, source.shared, -1);
  ++stats_.stream_reuses;
  stats_.shared_positions += static_cast<uint64_t>(source.shared);
  FinishStreamHit(source.seq, source.shared, std::move(tokens), table);
}

std::optional<llama_seq_id> KvCellMap::TakeSeqIdForHit(absl::Span<const BlockId> table,
                                                        int32_t start, BlockId cow_source) {
  if (streams_) {
    std::vector<TokenId> tokens = HitTokens(table, start, cow_source);
    const Source source = LongestPrefix(-1, tokens);
    const SeqState* s = source.seq >= 0 ? &seqs_[static_cast<size_t>(source.seq)] : nullptr;
    if (s != nullptr && s->retained && source.shared >= block_size_) {
      TakeOver(source, std::move(tokens), table);
      return source.seq;
    }
  }
  // Taking an id may evict a retained sequence: the source is chosen after.
  const std::optional<llama_seq_id> seq = TakeSeqId();
  if (seq.has_value()) Attach(*seq, table, start, cow_source);
  return seq;
}

void KvCellMap::RecordHistory(llama_seq_id seq, int32_t begin, int32_t end,
                              absl::Span<const TokenId> tokens, TokenId pending) {
  std::vector<TokenId>& history = seqs_[static_cast<size_t>(seq)].history;
  history.resize(static_cast<size_t>(begin));
  if (tokens.empty()) {
    history.insert(history.end(), static_cast<size_t>(end - begin), pending);
  } else {
    history.insert(history.end(), tokens.begin(), tokens.end());
  }
}

}  // namespace hearth::llama_cpp

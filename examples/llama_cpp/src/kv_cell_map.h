// File: examples/llama_cpp/src/kv_cell_map.h
//
// `KvCellMap` keeps llama.cpp's KV cells in step with Hearth's block tables
// when Hearth caches prefixes, so that a prefix-cache hit (a sequence whose
// first plan entry starts past position 0) finds its KV in llama.cpp.
//
// Why this is needed: llama.cpp places KV cells itself and knows sequences,
// not blocks; a cell belongs to a set of sequence ids. Hearth's block id is
// what names a block's KV: block b at index k of a table holds positions
// [k * block_size, (k + 1) * block_size) of whatever prompt computed it. So
// this map records, per Hearth block, the llama sequence that holds its
// cells (its holder), and:
//   - a hit copies the holder's cells of that range into the new sequence
//     (llama_memory_seq_cp: in the unified cache the cells are shared, not
//     duplicated), and the new sequence becomes the block's holder; the
//     partial last block of a fully cached prompt (Hearth's copy-on-write)
//     copies only the positions before the plan's start, so the sequence's
//     own write lands in its own cells;
//   - a released or preempted sequence keeps its id and cells while it
//     holds blocks (Hearth may have cached them): it is retained, on spare
//     ids above Hearth's max_running;
//   - a block Hearth hands out again for other positions drops its old
//     cells first (llama_memory_seq_rm on the retained holder), so the cells
//     in use never exceed what Hearth's pool accounts for;
//   - when a new sequence needs an id and none is free, the least recently
//     retained sequence is evicted: its blocks lose their cells. Hearth may
//     still list them as cached; a later hit on one is recomputed here from
//     the tokens recorded for the block (Repair), an unplanned prefill that
//     keeps results right.
//
// On per-sequence streams (KvLayout::kPerSequence) no cell is shared: a
// sequence's cells lie in its own stream, and llama.cpp copies between
// streams only whole (llama_memory_seq_cp of a partial range aborts). The
// map then records, per sequence, the tokens of the positions it holds, and
// a hit uses the sequence sharing the longest prefix with the hit's tokens
// (the KV of a position depends only on the tokens up to it): a retained
// one's id and stream are taken over, with no copy (it would never run
// again); a live one's whole stream is copied. Positions past the shared
// prefix are dropped and the rest of the hit is recomputed (Repair). A
// retained sequence keeps its whole stream: its cells take no room from
// other sequences.
//
// Internal to LlamaStepExecutor; one thread at a time.

#ifndef HEARTH_LLAMA_CPP_KV_CELL_MAP_H_
#define HEARTH_LLAMA_CPP_KV_CELL_MAP_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "llama.h"

namespace hearth::llama_cpp {

class KvCellMap {
 public:
  // Positions of one sequence to compute before the plan's step: their
  // cells were lost (an evicted holder).
  struct Repair {
    llama_seq_id seq = 0;
    int32_t begin = 0;
    std::vector<TokenId> tokens;
  };
  struct Stats {
    // Positions whose cells a hit shared from a holder, and positions
    // recomputed because the holder had been evicted.
    uint64_t shared_positions = 0;
    uint64_t repaired_positions = 0;
    // Retained sequences evicted for an id.
    uint64_t evictions = 0;
    // Streams: retained streams hits took over, whole-stream copies they made.
    uint64_t stream_reuses = 0;
    uint64_t stream_copies = 0;
  };

  // `streams`: the context has a KV stream per sequence id.
  KvCellMap(llama_memory_t memory, int32_t block_size, int32_t num_seq_ids, bool streams);

  // An id for a new sequence: the lowest free one, else the least recently
  // retained one's after evicting it. Empty when every id is live.
  std::optional<llama_seq_id> TakeSeqId();
  // The request of `seq` was released or preempted: its cells stay while it
  // holds blocks.
  void Retain(llama_seq_id seq);
  // `seq`'s cells are gone or untrusted: removed, its blocks lose them, the
  // id is free.
  void Forget(llama_seq_id seq);

  // An id for a new sequence whose plan entry starts at `start` > 0 on
  // `table` (`cow_source` as for Attach), attached: on streams possibly the
  // id of the retained sequence it takes over; else TakeSeqId() and Attach.
  // Empty when every id is live.
  std::optional<llama_seq_id> TakeSeqIdForHit(absl::Span<const BlockId> table, int32_t start,
                                              BlockId cow_source);
  // A new sequence `seq` whose plan entry starts at `start` > 0 on `table`
  // (`cow_source`: the block the table's partial last hit block copies, or
  // invalid): shares the cached positions [0, start) from their holders;
  // those whose holder was evicted are appended to repairs().
  void Attach(llama_seq_id seq, absl::Span<const BlockId> table, int32_t start,
              BlockId cow_source);
  // What Attach found lost since the caller last cleared it.
  std::vector<Repair>& repairs() { return repairs_; }
  // `seq` is about to compute positions [begin, end) of `table` (`tokens`,
  // or one pending token when empty and `pending` >= 0): it holds those
  // blocks now, a block's old cells elsewhere are dropped, and the tokens
  // are recorded for repairs.
  void Claim(llama_seq_id seq, absl::Span<const BlockId> table, int32_t begin, int32_t end,
             absl::Span<const TokenId> tokens, TokenId pending);

  // The tokens recorded for positions [0, positions) of a table's blocks
  // (a swap-out saves them with the sequence's cells).
  std::vector<TokenId> TokensOfTable(absl::Span<const BlockId> table, int32_t positions);

  const Stats& stats() const { return stats_; }

 private:
  struct Holder {
    llama_seq_id seq = -1;
    int32_t index = -1;
  };
  struct SeqState {
    bool live = false;
    bool retained = false;
    // Blocks whose holder is (or was) this sequence; checked against
    // holder_ when used, so stale entries cost nothing but a check.
    std::vector<BlockId> held;
    int32_t num_held = 0;
    // Streams: the tokens of the positions claimed for it, from 0.
    std::vector<TokenId> history;
  };
  struct Source {
    llama_seq_id seq = -1;
    int32_t shared = 0;
  };

  Holder& HolderOf(BlockId b);
  // Makes `seq` the holder of block `b` at `index`, dropping the cells of
  // the block's previous holder when that one is retained.
  void SetHolder(BlockId b, llama_seq_id seq, int32_t index);
  void Release(llama_seq_id seq, BlockId b);
  void Free(llama_seq_id seq);
  TokenId* TokensOf(BlockId b);

  // Streams (kv_cell_map_streams.cc): Attach on per-sequence streams, the
  // tokens a hit's blocks hold, the sequence whose cells share most of them,
  // and the history Claim keeps.
  void AttachStream(llama_seq_id seq, absl::Span<const BlockId> table, int32_t start,
                    BlockId cow_source);
  std::vector<TokenId> HitTokens(absl::Span<const BlockId> table, int32_t start,
                                 BlockId cow_source);
  Source LongestPrefix(llama_seq_id seq, absl::Span<const TokenId> tokens) const;
  // Makes retained `source` live again as the hit's sequence.
  void TakeOver(const Source& source, std::vector<TokenId> tokens,
                absl::Span<const BlockId> table);
  // The hit's sequence `seq` holds [0, shared) of `tokens`: the rest is
  // repaired, its full blocks are its own, and `tokens` is its history.
  void FinishStreamHit(llama_seq_id seq, int32_t shared, std::vector<TokenId> tokens,
                       absl::Span<const BlockId> table);
  void RecordHistory(llama_seq_id seq, int32_t begin, int32_t end,
                     absl::Span<const TokenId> tokens, TokenId pending);

  llama_memory_t memory_;
  int32_t block_size_;
  bool streams_;
  std::vector<Holder> holders_;            // by block id
  std::vector<TokenId> block_tokens_;      // block_size_ per block id
  std::vector<SeqState> seqs_;             // by llama seq id
  std::vector<llama_seq_id> free_;
  std::deque<llama_seq_id> retained_;      // oldest first
  std::vector<Repair> repairs_;
  Stats stats_;
};

}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_KV_CELL_MAP_H_

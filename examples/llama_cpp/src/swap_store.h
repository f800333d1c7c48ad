// File: examples/llama_cpp/src/swap_store.h
//
// `SwapStore` holds the KV of swapped-out sequences in host memory for
// LlamaStepExecutor: Hearth's swap_out copies of one request become one
// llama_state_seq_get_data() of its sequence, saved under the host blocks
// Hearth named, and its swap_in copies one llama_state_seq_set_data().
//
// Why whole sequences: llama.cpp saves and restores a sequence's cells, not
// a range of them, and Hearth swaps a request out and in whole (all blocks
// of its computed prefix). A swap-in must list exactly the host blocks of
// one swap-out; anything else is refused. Host blocks Hearth hands out
// again drop the record they belonged to (its request ended while swapped
// out), so the store never holds more than Hearth's host tier names.
//
// Internal to LlamaStepExecutor; one thread at a time.

#ifndef HEARTH_LLAMA_CPP_SWAP_STORE_H_
#define HEARTH_LLAMA_CPP_SWAP_STORE_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "llama.h"

namespace hearth::llama_cpp {

class SwapStore {
 public:
  struct Saved {
    std::vector<uint8_t> state;
    std::vector<BlockId> host;
    // Positions the sequence held, and their tokens when prefix caching
    // records them (empty otherwise).
    int32_t positions = 0;
    std::vector<TokenId> tokens;
  };

  // Saves the cells of `seq` under `host` (the request's swap-out targets,
  // in table order). Internal when llama.cpp saves nothing.
  absl::Status Save(llama_context* ctx, llama_seq_id seq, std::vector<BlockId> host,
                    int32_t positions, std::vector<TokenId> tokens);
  // Removes and returns the record swapped out to exactly `host`.
  // NotFound when none starts there; FailedPrecondition when one does but
  // with other blocks (a partial swap).
  absl::StatusOr<Saved> Take(RequestId id, absl::Span<const BlockId> host);
  // Restores `saved` into `seq` (whose cells are dropped first). Internal
  // when llama.cpp finds no room or cannot read it.
  static absl::Status Restore(llama_context* ctx, const Saved& saved, llama_seq_id seq);

  int64_t bytes() const { return bytes_; }
  size_t records() const { return records_.size(); }

 private:
  void Erase(BlockId key);

  // By the first host block; owner_ maps every host block to that key.
  absl::flat_hash_map<BlockId, Saved> records_;
  absl::flat_hash_map<BlockId, BlockId> owner_;
  int64_t bytes_ = 0;
};

}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_SWAP_STORE_H_

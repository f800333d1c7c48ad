// File: src/exec/kv_layout.h
//
// Offsets into the block-major KV pool shared by all executors:
//   pool[block][layer][k=0|v=1][kv_head][slot][head_dim]
// One block is one contiguous range of BlockElements() elements, so swaps and
// copy-on-write copy whole blocks; within a block, one head's slots are
// contiguous (block_size * head_dim elements), which is what paged attention
// reads. Header-only, usable from CUDA device code. Not part of the API.

#ifndef HEARTH_EXEC_KV_LAYOUT_H_
#define HEARTH_EXEC_KV_LAYOUT_H_

#include <cstdint>

#include "exec/weight_init.h"  // HEARTH_HOST_DEVICE

namespace hearth::exec_internal {

struct KvLayout {
  int32_t num_layers = 0;
  int32_t num_kv_heads = 0;
  int32_t block_size = 0;
  int32_t head_dim = 0;

  HEARTH_HOST_DEVICE int64_t HeadElements() const {
    return int64_t{block_size} * head_dim;
  }
  HEARTH_HOST_DEVICE int64_t BlockElements() const {
    return int64_t{num_layers} * 2 * num_kv_heads * HeadElements();
  }
  // First element of (block, layer, kv, head, slot 0, dim 0); kv is 0 for K
  // and 1 for V.
  HEARTH_HOST_DEVICE int64_t HeadOffset(int64_t block, int32_t layer,
                                        int32_t kv, int32_t head) const {
    return block * BlockElements() +
           ((int64_t{layer} * 2 + kv) * num_kv_heads + head) * HeadElements();
  }
  HEARTH_HOST_DEVICE int64_t Offset(int64_t block, int32_t layer, int32_t kv,
                                    int32_t head, int32_t slot) const {
    return HeadOffset(block, layer, kv, head) + int64_t{slot} * head_dim;
  }
};

}  // namespace hearth::exec_internal

#endif  // HEARTH_EXEC_KV_LAYOUT_H_

// File: src/kv/chain_scope.h
//
// ChainScope: where a request's cache scopes (RequestSpec::cache_scope)
// enter its prefix-hash chain, resolved once at Submit from the spec and
// the scheduler's key, and kept with the sequence's KV state so that every
// later extension of the chain (admission, registration, recompute after
// preemption) hashes in the same scopes. ValidateCacheScope checks a spec's
// scope fields as hostile input.
//
// Internal to the scheduler. Pure functions; any thread.

#ifndef HEARTH_SRC_KV_CHAIN_SCOPE_H_
#define HEARTH_SRC_KV_CHAIN_SCOPE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hearth/request/request_spec.h"

namespace hearth::internal {

struct ChainScope {
  // The parent hash of block 0: the model's root with the first block's
  // scope entered (the shared prefix's, or the request's own).
  uint64_t first_parent = 0;
  // The request's own scope, entered at block `own_from` when that is > 0
  // (the first block past a shared prefix); with 0 it is in first_parent.
  uint64_t own_scope = 0;
  int32_t own_from = 0;
  // False: the request opted out; it neither looks up nor registers blocks.
  bool cached = true;
  // A mean-pooled embedding (Pooling::kMean): the engine sums every
  // position's state within one stay on the device, so the sequence reuses
  // no cached block (it may still register its own) and is never swapped
  // out (a preemption recomputes it from position 0).
  bool computes_every_position = false;
  // The prompt's last, partial block when an encoder span overlaps it
  // (-1: none), and that overlap's salt (SpanSalt): the block fills with
  // generated tokens and is hashed only then, long after Submit, which is
  // the only time the spans are at hand.
  int32_t tail_block = -1;
  uint64_t tail_salt = 0;
};

// What the encoder spans overlapping the block [block_start, block_start +
// block_size) add to its chain hash (each span's content hash, offset and
// length), 0 when none does. `spans` is sorted (RequestSpec's rule).
uint64_t SpanSalt(absl::Span<const EncoderSpan> spans, int64_t block_start, int32_t block_size);

// The key under which a span's encoder output is cached: its content and
// length in the cache scope of its first position, so the same image in one
// scope is encoded once and never reused across scopes. A request that opts
// out of the cache gets keys of its own (from `request_nonce`).
uint64_t EncoderCacheKey(const ChainScope& scope, const EncoderSpan& span, int32_t block_size,
                         uint64_t request_nonce);

// The chain scope of `spec` (validated) under `key`
// (KvCacheConfig::prefix_hash_key) for blocks of `block_size` tokens.
ChainScope ResolveChainScope(const RequestSpec& spec, uint64_t key, int32_t block_size);

// OK, or InvalidArgument naming the RequestSpec.cache_scope field, its
// value and what is allowed (CacheScope's rules).
absl::Status ValidateCacheScope(const RequestSpec& spec);

}  // namespace hearth::internal

#endif  // HEARTH_SRC_KV_CHAIN_SCOPE_H_

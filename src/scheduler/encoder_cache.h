// File: src/scheduler/encoder_cache.h
//
// EncoderCache: which encoder outputs the engine holds, as the scheduler
// plans them (StepPlan::encoder_inputs, encoder_frees). Each entry is one
// span's output, keyed by EncoderCacheKey (its content in its cache scope)
// and sized in span positions; together they stay within a capacity
// (SchedulerOptions::encoder_cache_tokens). Entries a plan being built
// reads are pinned for that plan; the others are evicted least recently
// read first when a new output needs room, and every eviction is listed so
// that the engine frees the same entry before the step's encodes run.
//
// Pins last one plan: the engine applies a plan's frees only after the
// step before it has run, so with overlapped planning an entry the step in
// flight reads may be freed by the plan built beside it.
//
// Entry ids are small integers, reused after a free. Stores and evictions
// are O(1) each (an intrusive LRU list and a hash map reserved up front).
// Internal to the scheduler; engine thread only.

#ifndef HEARTH_SRC_SCHEDULER_ENCODER_CACHE_H_
#define HEARTH_SRC_SCHEDULER_ENCODER_CACHE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace hearth::internal {

class EncoderCache {
 public:
  explicit EncoderCache(int32_t capacity_tokens);

  // The entry holding `key`'s output, or -1.
  int32_t Find(uint64_t key) const;
  // Tokens a Store could take now (free, or held by entries the plan of
  // `step` does not read).
  int32_t Available(uint64_t step) const;
  // Whether `entry` is pinned by the plan of `step`.
  bool Pinned(int32_t entry, uint64_t step) const {
    return entries_[static_cast<size_t>(entry)].pinned_step == step;
  }
  int32_t tokens_of(int32_t entry) const { return entries_[static_cast<size_t>(entry)].tokens; }
  // The plan of `step` reads `entry`: most recently used, pinned.
  void Touch(int32_t entry, uint64_t step);
  // Stores `key` (absent) taking `tokens` (<= Available(step)), evicting
  // least recently read entries and appending their ids to `freed`; the
  // new entry is pinned by `step`. Returns its id.
  int32_t Store(uint64_t key, int32_t tokens, uint64_t step, std::vector<int32_t>* freed);
  // Forgets `entry` (its encoding failed) and lists it in `freed`.
  void Drop(int32_t entry, std::vector<int32_t>* freed);

  // Whether the bookkeeping adds up (used tokens, list and map agree);
  // "" or what is wrong.
  std::string Check() const;

 private:
  struct Entry {
    uint64_t key = 0;
    int32_t tokens = 0;  // 0: free
    int32_t prev = -1, next = -1;  // LRU list (head: least recent)
    uint64_t pinned_step = 0;
  };
  void Unlink(int32_t e);
  void PushBack(int32_t e);
  void Free(int32_t e, std::vector<int32_t>* freed);
  // Tokens pinned by `step` (0 for any other step).
  int32_t PinnedTokens(uint64_t step) const { return step == pin_step_ ? pinned_ : 0; }

  const int32_t capacity_;
  int32_t used_ = 0;
  uint64_t pin_step_ = 0;
  int32_t pinned_ = 0;
  std::vector<Entry> entries_;
  std::vector<int32_t> free_ids_;
  int32_t head_ = -1, tail_ = -1;
  absl::flat_hash_map<uint64_t, int32_t> by_key_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_ENCODER_CACHE_H_

// File: src/scheduler/request_table.h
//
// RequestTable: where the scheduler's live requests are kept. Records sit in
// a slab addressed by slot (the KV room's sequences live inside them), found
// by id through one map; slots of ended requests are recycled (held while a
// plan naming them may still run, SlotRecycler); waiting, preparing and
// swapped requests are counted per phase, and running ones sit in two
// unordered run lists (decoding, prefilling) with O(1) swap-removal.
//
// The table keeps where things are, not what they mean: the lifecycle
// (scheduler_lifecycle.cc) decides each transition and tells the table.
// Engine thread only. Every buffer is reserved at construction for the
// usual backlog, so a steady step allocates nothing here.

#ifndef HEARTH_SRC_SCHEDULER_REQUEST_TABLE_H_
#define HEARTH_SRC_SCHEDULER_REQUEST_TABLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hearth/common/ids.h"
#include "hearth/request/request_state.h"
#include "internal/probing_hash_map.h"
#include "scheduler/request_record.h"
#include "scheduler/slot_recycler.h"

namespace hearth::internal {

class RequestTable {
 public:
  // Room for `backlog` live requests, `running` in the run lists and
  // `held` slots waiting for a step (overlapped planning), unallocated.
  void Reserve(size_t backlog, size_t running, size_t held);

  // --- Records by slot. References stay valid until a new slot is added
  // (TakeSlot with no slot free).
  RequestRecord& operator[](uint32_t slot) { return slab_[slot]; }
  const RequestRecord& operator[](uint32_t slot) const { return slab_[slot]; }
  RequestRecord* data() { return slab_.data(); }
  const RequestRecord* data() const { return slab_.data(); }
  // Every slot, live or not (an ended request's record has no id).
  std::vector<RequestRecord>& slots() { return slab_; }

  // --- Live requests by id.
  RequestRecord* Find(RequestId id) {
    const uint32_t* slot = slot_of_.find(id);
    return slot == nullptr ? nullptr : &slab_[*slot];
  }
  const RequestRecord* Find(RequestId id) const {
    const uint32_t* slot = slot_of_.find(id);
    return slot == nullptr ? nullptr : &slab_[*slot];
  }
  size_t num_live() const { return slot_of_.size(); }
  // (id, slot) of every live request, in no order.
  const ProbingHashMap<RequestId, uint32_t>& live() const { return slot_of_; }

  // --- Slots.
  struct Taken {
    uint32_t slot = 0;
    // A slot added to the slab (none was free): parallel per-slot tables
    // grow by one too.
    bool added = false;
  };
  Taken TakeSlot();
  // `id` lives in `slot` from now on.
  void Map(RequestId id, uint32_t slot) { slot_of_.insert_or_assign(id, slot); }
  // `id` (live) ends; returns its slot, for FreeSlot or HoldSlot.
  uint32_t Unmap(RequestId id);
  void FreeSlot(uint32_t slot) { slots_.Free(slot); }
  // A plan naming `slot` may run until step `until` completes.
  void HoldSlot(uint32_t slot, uint64_t until) { slots_.HoldUntil(slot, until); }
  void StepCompleted(uint64_t step) {
    if (slots_.has_held()) slots_.StepCompleted(step);
  }

  // --- Phases. Held, preparing, waiting and swapped requests are counted
  // here; running ones by the run lists; kQueued has not been seen by Plan.
  static bool Counted(RequestPhase p) {
    return p == RequestPhase::kPreparing || p == RequestPhase::kWaiting ||
           p == RequestPhase::kSwapped || p == RequestPhase::kHeld;
  }
  void CountPhaseChange(RequestPhase from, RequestPhase to) {
    if (Counted(from)) --phase_counts_[static_cast<size_t>(from)];
    if (Counted(to)) ++phase_counts_[static_cast<size_t>(to)];
  }
  int32_t count(RequestPhase phase) const { return phase_counts_[static_cast<size_t>(phase)]; }
  static constexpr size_t kNumPhases = static_cast<size_t>(RequestPhase::kFailed) + 1;

  // --- Run lists.
  const std::vector<uint32_t>& list(RunList which) const {
    return which == RunList::kDecoding ? decoding_ : prefilling_;
  }
  const std::vector<uint32_t>& decoding() const { return decoding_; }
  const std::vector<uint32_t>& prefilling() const { return prefilling_; }
  int32_t running_count() const {
    return static_cast<int32_t>(decoding_.size() + prefilling_.size());
  }
  void Link(RequestRecord& record, RunList list);
  // O(1): the list's last entry takes its place.
  void Unlink(RequestRecord& record);

 private:
  std::vector<RequestRecord> slab_;
  SlotRecycler slots_;
  ProbingHashMap<RequestId, uint32_t> slot_of_;
  std::array<int32_t, kNumPhases> phase_counts_{};
  std::vector<uint32_t> decoding_;
  std::vector<uint32_t> prefilling_;
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_REQUEST_TABLE_H_

// File: src/exec/sequence_tables.h
//
// The engine side of the block-table protocol, shared by every executor:
// per-request block tables kept from `full_block_table` / `new_blocks` diffs,
// the number of positions each request has in the KV pool, and the checks
// that turn a malformed StepPlan into an error instead of an out-of-range
// write. Executors call, per step:
//   ValidateCopies (whole-step error, nothing changed) -> DropEnded ->
//   (apply copies) -> PrepareSequences (per-sequence errors) ->
//   (forward pass reading table()) -> Advance for each computed sequence.
// Not part of the public API.

#ifndef HEARTH_EXEC_SEQUENCE_TABLES_H_
#define HEARTH_EXEC_SEQUENCE_TABLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "hearth/common/ids.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth::exec_internal {

// What an executor can hold; plans are checked against it.
struct KvGeometry {
  int32_t block_size = 16;
  int32_t num_device_blocks = 0;
  int32_t num_host_blocks = 0;
  // Largest position + 1 the executor can compute (rotary table size).
  int32_t max_positions = 0;
  int32_t vocab_size = 0;
  // The one model the executor serves.
  ModelId model = ModelId(0);
};

// One planned sequence after PrepareSequences().
struct PreparedSequence {
  // Empty when the sequence can run; else why it fails (the executor reports
  // it in SequenceOutcome::error and forgets the request).
  std::string error;
  // Valid while the step runs when `error` is empty.
  const std::vector<BlockId>* table = nullptr;
  // ScheduledSequence::input_pending: the token this executor sampled for
  // the request in its previous step, fed at start_position. -1 otherwise.
  TokenId pending_input = -1;
  // The sequence's input token `t` (of num_tokens).
  TokenId Input(const ScheduledSequence& s, int32_t t) const {
    return s.input_pending ? pending_input : s.token_ids[static_cast<size_t>(t)];
  }
};

class SequenceTables {
 public:
  explicit SequenceTables(KvGeometry geometry) : geometry_(geometry) {}


  // InvalidArgument when a copy names a block outside its tier, or a copy
  // list writes one target twice. Changes nothing.
  absl::Status ValidateCopies(const StepPlan& plan) const;

  // Forgets `preempted` and `released` requests.
  void DropEnded(const StepPlan& plan);

  // Updates the engine-side table of every planned sequence and checks it
  // against the plan; one entry per plan sequence, in plan order.
  std::vector<PreparedSequence> PrepareSequences(const StepPlan& plan);

  // Records that `id` now has `positions` positions in the pool.
  void Advance(RequestId id, int32_t positions);
  // Records the token sampled for `id` this step: the input of its next
  // step when that step is planned ahead (ScheduledSequence::input_pending).
  void NoteSampled(RequestId id, TokenId token);

  // Requests the engine holds state for.
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::vector<BlockId> table;
    // Positions [0, cached) hold computed K/V.
    int32_t cached = 0;
    // The token last sampled for it, at position `cached`; -1 when none.
    TokenId sampled = -1;
  };
  std::string CheckSequence(const ScheduledSequence& s) const;
  std::string UpdateTable(const ScheduledSequence& s);
  // Fails sequences that would write into a block another sequence of this
  // step also holds (a missed copy-on-write).
  void CheckSharedWrites(const StepPlan& plan,
                         std::vector<PreparedSequence>& out) const;

  KvGeometry geometry_;
  absl::flat_hash_map<RequestId, Entry> entries_;
  // CheckSharedWrites' per-block count, kept so that steps reuse its memory.
  struct Holders {
    int32_t count = 0;
    size_t last = SIZE_MAX;
  };
  mutable absl::flat_hash_map<uint32_t, Holders> holders_;
};

}  // namespace hearth::exec_internal

#endif  // HEARTH_EXEC_SEQUENCE_TABLES_H_

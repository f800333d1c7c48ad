// File: src/policy/tree/entry.h
//
// What a policy tree remembers of one live request, shared by every node on
// the request's path. Only what more than one node reads lives here; a node's
// own per-request state lives in the node, indexed by Entry::index.

#ifndef HEARTH_SRC_POLICY_TREE_ENTRY_H_
#define HEARTH_SRC_POLICY_TREE_ENTRY_H_

#include <cstddef>
#include <cstdint>

#include "absl/time/time.h"
#include "hearth/common/ids.h"

namespace hearth::policy_internal {

// The fields every step's service path touches (OnServed -> Charge) come
// first and fit one cache line: with a thousand sequences served per step, a
// second line per entry is a second cache miss per sequence.
struct alignas(64) Entry {
  // --- Hot.
  RequestId id;
  // Prefill tokens charged at admission and not yet served.
  int32_t reserved_prefill = 0;
  // The entry's place in its tree's pool, fixed for the pool's life and
  // dense from 0: nodes keep per-entry state in arrays indexed by it.
  int32_t index = -1;
  // Where this entry sits in the nodes of its path, cached on first use so
  // that the per-step service path does no hash lookups: its group in the
  // fair-share node of each ShareKey, its level in the priority node, and its
  // member in the SLO level's ledger.
  mutable int32_t share_slot[2] = {-1, -1};
  mutable int32_t level_slot = -1;
  // The entry's member in the SLO class level's ledger (member_ledger.h).
  mutable int32_t member_slot = -1;
  UserId user;
  // The request's own priority (RequestView::priority); the priority node
  // adds its class's.
  int32_t priority = 0;
  bool running = false;
  bool declined = false;
  // Removed (terminal) but kept until the next OnServed charges its last step.
  bool retired = false;
  WorkClassId work_class;
  // Positions whose KV the request holds (RequestView::computed_tokens as
  // of the last event or served step), and the furthest position it was
  // ever charged for: recomputing positions below that is not charged again.
  int32_t position = 0;
  int32_t charged_upto = 0;

  // --- Touched on events only.
  int32_t prompt_tokens = 0;
  // RequestView::predicted_output.expected_tokens; 0: no prediction.
  int32_t predicted_output_tokens = 0;
  uint64_t arrival_seq = 0;
  // Where arrival-ordered leaves rank the request: its arrival, or for a
  // call of a running agent workflow up to the tree's workflow head start
  // earlier, but never before its workflow's first call arrived.
  absl::Time rank_time = absl::InfinitePast();
  absl::Time arrival_time = absl::InfinitePast();
  // When the entry last entered the waiting set (arrival or preemption).
  absl::Time waiting_since = absl::InfinitePast();
  // The request's own TTFT target (RequestView::ttft_slo); InfiniteDuration:
  // none, and the SLO level ranks it as its class.
  absl::Duration ttft_slo = absl::InfiniteDuration();
};
static_assert(offsetof(Entry, prompt_tokens) <= 64,
              "the hot fields of Entry must fit its first cache line");

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_TREE_ENTRY_H_

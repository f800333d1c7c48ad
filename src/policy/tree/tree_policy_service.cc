// File: src/policy/tree/tree_policy_service.cc
//
// TreePolicy's OnServed, the one call of every step: finding each served
// entry along last step's order and charging its service to the tree, single
// decodes in one batch. Apart because it is the hot path
// (tree_policy_impl.h says how the class is split).

#include "policy/tree/tree_policy_impl.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace hearth::policy_internal {

void TreePolicy::OnServed(absl::Span<const ServedTokens> served, absl::Time now) {
  served_prev_.swap(served_cache_);
  served_cache_.resize(served.size());
  size_t cursor = 0;
  for (size_t i = 0; i < served.size(); ++i) {
    const ServedTokens& s = served[i];
    Entry* e = FindServed(s.id, &cursor);
    served_cache_[i] = e != nullptr ? e : &unknown_;
    if (e == nullptr || (!e->running && !e->retired)) continue;
    ChargeServed(e, s);
  }
  ChargeDecodeBatch();
  root_->Flush();
  for (Entry* e : retired_) Release(e);
  retired_.clear();
}

// Plans list mostly the same sequences in the same order step after step,
// but not at the same positions: preemptions drop entries, and admissions
// and prefill-to-decode moves insert some. Walks last step's entries
// alongside this step's from `*cursor`, skipping a few dropped ones, so
// that only inserted or moved sequences cost a hash lookup.
inline Entry* TreePolicy::FindServed(RequestId id, size_t* cursor) {
  Entry* e = nullptr;
  for (size_t j = *cursor; j < served_prev_.size() && j <= *cursor + kLookAhead; ++j) {
    if (served_prev_[j]->id == id) {
      e = served_prev_[j];
      *cursor = j + 1;
      break;
    }
  }
  // The walk is bound by memory latency: fetch the next entry early.
  if (*cursor + kPrefetch < served_prev_.size()) {
    __builtin_prefetch(served_prev_[*cursor + kPrefetch]);
  }
  return e != nullptr ? e : Find(id);
}

// Settles one served entry's reservation and charges its service:
// prefill positions beyond any it was charged for before (recomputing
// after a preemption is not charged twice) and every decoded token.
// Single decodes go into one batch, everything else at once.
inline void TreePolicy::ChargeServed(Entry* e, const ServedTokens& s) {
  if (s.prefill_tokens == 0 && s.decode_tokens == 1) {
    ChargeDecode(e);
    return;
  }
  const int32_t prefill = std::max(s.prefill_tokens, 0);
  const int32_t decode = std::max(s.decode_tokens, 0);
  const int32_t start = e->position;
  e->position += prefill + decode;
  const int32_t fresh = std::max(0, std::min(prefill, start + prefill - e->charged_upto));
  e->charged_upto = std::max(e->charged_upto, e->position);
  const int32_t prepaid = std::min(fresh, e->reserved_prefill);
  e->reserved_prefill -= prepaid;
  // Decoding means the prefill is over: return what was not needed
  // (e.g. prompt blocks found in the prefix cache).
  if (decode > 0) Refund(e);
  // Recomputed positions count as prepaid: accounts of admissions (VTC
  // counters, quotas) skip them, accounts of service received (MLFQ
  // quanta) do not.
  if (prefill == 0 && decode == 1) {
    decode_batch_.push_back(e);
  } else if (prefill > 0 || decode > 0) {
    root_->Charge(e, prefill, decode, prepaid + (prefill - fresh));
  }
}

// In steady decoding the same sequences decode step after step: the nodes
// are then told that the batch repeats, and reuse its split into groups.
// An entry released since could come back for another request, so a
// release rules that out.
void TreePolicy::ChargeDecodeBatch() {
  const bool repeat = !released_since_charge_ && decode_batch_ == last_decode_batch_;
  root_->ChargeDecodes(decode_batch_, repeat);
  released_since_charge_ = false;
  last_decode_batch_.swap(decode_batch_);
  decode_batch_.clear();
}

// ChargeServed for the one decoded token of a steady decode step, the bulk
// of every step: no prefill, so nothing fresh and nothing prepaid.
inline void TreePolicy::ChargeDecode(Entry* e) {
  e->position += 1;
  e->charged_upto = std::max(e->charged_upto, e->position);
  Refund(e);
  decode_batch_.push_back(e);
}

}  // namespace hearth::policy_internal

// File: src/policy/tree/tree_policy_victims.cc
//
// TreePolicy's victims: whom the tree names for a beneficiary to preempt,
// singly or as candidates, and whose share a waiting request may reclaim
// (tree_policy_impl.h says how the class is split).

#include "policy/tree/tree_policy_impl.h"

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace hearth::policy_internal {

// With a reserve for interactive arrivals, a waiting request finds room
// without evicting anyone: admission preemption would then only recompute
// documents, many times FIFO's preemptions for no better attainment
// (figures: bench/RESULTS.md, "Figures behind the rules"). Growth still
// has victims, and members' shares are still reclaimed
// (ShareReclaimCandidates): the reserve keeps room, not shares.
// Over a host tier the eviction pauses the background victim instead
// (pauses_background), so the reserve does not stand in for it: the
// reserve is sized for arrivals, not for a queue of them.
bool TreePolicy::KeepsRoomInstead(bool beneficiary_running) const {
  return !beneficiary_running && !rules_.pauses_background &&
         (rules_.background_kv_reserve > 0 || rules_.priority_reserve.share > 0);
}

// The entry victims are asked for, or null when none may be named for it.
Entry* TreePolicy::VictimBeneficiary(RequestId id, bool running) {
  Entry* b = FindOffered(id);
  if (b == nullptr || b->retired || b->running != running) return nullptr;
  return b;
}

RequestId TreePolicy::PickVictim(RequestId beneficiary,
                                 bool beneficiary_running) {
  Entry* b = VictimBeneficiary(beneficiary, beneficiary_running);
  if (b == nullptr) return RequestId();
  if (KeepsRoomInstead(beneficiary_running)) return RequestId();
  Entry* victim = root_->Victim(b, beneficiary_running);
  if (victim == nullptr || victim == b || !victim->running) {
    return RequestId();
  }
  return victim->id;
}

size_t TreePolicy::VictimCandidates(RequestId beneficiary, bool beneficiary_running,
                                    absl::Span<RequestId> out) {
  Entry* b = VictimBeneficiary(beneficiary, beneficiary_running);
  if (b == nullptr) return 0;
  if (KeepsRoomInstead(beneficiary_running)) return 0;
  Entry* found[kMaxVictimCandidates];
  return Listed(b, root_->Victims(b, beneficiary_running, Room(found, out)), found, out);
}

size_t TreePolicy::ShareReclaimCandidates(RequestId beneficiary, absl::Span<RequestId> out) {
  Entry* b = VictimBeneficiary(beneficiary, /*running=*/false);
  if (b == nullptr) return 0;
  Entry* found[kMaxVictimCandidates];
  return Listed(b, root_->GuardVictims(b, Room(found, out)), found, out);
}

absl::Span<Entry*> TreePolicy::Room(Entry* (&found)[kMaxVictimCandidates],
                                    absl::Span<RequestId> out) {
  return absl::MakeSpan(found, std::min(out.size(), std::size(found)));
}

// The ids of the first `listed` entries of `found` that are running and
// not `b`, into `out`; returns how many.
size_t TreePolicy::Listed(const Entry* b, size_t listed, Entry* const* found,
                          absl::Span<RequestId> out) {
  size_t n = 0;
  for (size_t i = 0; i < listed; ++i) {
    if (found[i] != b && found[i]->running) out[n++] = found[i]->id;
  }
  return n;
}

}  // namespace hearth::policy_internal

// File: src/policy/nodes/member_ledger.cc

#include "policy/nodes/member_ledger.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace hearth::policy_internal {

MemberLedger::MemberLedger(MemberLedgerParams params)
    : params_(std::move(params)), backlog_(Smaller{&members_}) {
  params_.max_running = std::max(params_.max_running, 1);
  params_.kv_tokens = std::max<int64_t>(params_.kv_tokens, 1);
}

int32_t MemberLedger::SlotOf(const Entry* e) {
  if (e->member_slot >= 0) return e->member_slot;
  const uint32_t key = e->user.value();
  auto [it, inserted] = index_.try_emplace(key, static_cast<int32_t>(members_.size()));
  if (inserted) {
    Member& m = members_.emplace_back();
    const double weight = key < params_.weights.size() ? params_.weights[key] : 1.0;
    m.inverse_weight = 1.0 / weight;
  }
  e->member_slot = it->second;
  return it->second;
}

int32_t& MemberLedger::ReservedOf(const Entry* e) {
  const size_t at = static_cast<size_t>(e->index);
  if (at >= reserved_of_.size()) reserved_of_.resize(at + 1, 0);
  return reserved_of_[at];
}

void MemberLedger::Activity(int32_t m, int32_t delta) {
  Member& member = members_[m];
  const bool was = member.waiting + member.running > 0;
  if (delta > 0 && !was) active_weight_ += 1.0 / member.inverse_weight;
  if (delta < 0 && was && member.waiting + member.running + delta == 0) {
    active_weight_ -= 1.0 / member.inverse_weight;
  }
}

void MemberLedger::AddWaiting(const Entry* e, bool new_demand) {
  const int32_t m = SlotOf(e);
  Activity(m, 1);
  ++waiting_;
  if (members_[m].waiting++ > 0) return;
  if (new_demand) Lift(m);
  backlog_.Push(m);
}

void MemberLedger::RemoveWaiting(const Entry* e) {
  const int32_t m = SlotOf(e);
  Activity(m, -1);
  --waiting_;
  if (--members_[m].waiting == 0) backlog_.Erase(m);
}

void MemberLedger::AddRunning(const Entry* e) {
  const int32_t m = SlotOf(e);
  Activity(m, 1);
  Member& member = members_[m];
  ++member.running;
  member.positions += e->position;
  ReservedOf(e) = 0;
  last_admitted_ = m;
}

void MemberLedger::RemoveRunning(const Entry* e) {
  Activity(SlotOf(e), -1);
  Member& member = members_[SlotOf(e)];
  --member.running;
  member.positions -= e->position;
  int32_t& reserved = ReservedOf(e);
  member.reserved -= reserved;
  reserved = 0;
  removed_since_split_ = true;
}

void MemberLedger::Charge(const Entry* e, int32_t prefill_tokens, int32_t decode_tokens,
                          int32_t prepaid) {
  const int32_t m = SlotOf(e);
  AddService(m, (prefill_tokens - prepaid) * params_.prompt_token_weight +
                    decode_tokens * params_.decode_token_weight);
  AddServed(m, prefill_tokens * params_.prompt_token_weight +
                   decode_tokens * params_.decode_token_weight);
  if (!e->running) return;
  Member& member = members_[m];
  member.positions += int64_t{prefill_tokens} + decode_tokens;
  // The tree settled the reservation before charging: follow it.
  int32_t& reserved = ReservedOf(e);
  member.reserved += e->reserved_prefill - reserved;
  reserved = e->reserved_prefill;
}

// Reservations come during admission, outside a batch of charges: the heap
// is re-keyed at once, so that a lift in the same phase reads it in order.
void MemberLedger::Reserve(const Entry* e, int32_t tokens) {
  const int32_t m = SlotOf(e);
  members_[m].counter += tokens * params_.prompt_token_weight * members_[m].inverse_weight;
  backlog_.Update(m);
  if (!e->running) return;
  ReservedOf(e) += tokens;
  members_[m].reserved += tokens;
}

// Counted per member (the counts are kept for a repeated batch), then
// charged per member with one product, as the per-request calls charge.
void MemberLedger::ChargeDecodes(absl::Span<Entry* const> entries, bool repeat) {
  // A removed entry can be in the batch only if one was removed since the
  // last split: a repeated batch without removals needs no entry visited.
  if (!repeat || removed_since_split_) {
    for (int32_t m : decoded_) members_[m].decodes = 0;
    decoded_.clear();
    for (const Entry* e : entries) {
      // Removed entries are charged their last step but hold nothing.
      if (!e->running) {
        const int32_t m = SlotOf(e);
        AddService(m, params_.decode_token_weight);
        AddServed(m, params_.decode_token_weight);
        continue;
      }
      const int32_t m = SlotOf(e);
      if (members_[m].decodes++ == 0) decoded_.push_back(m);
    }
    removed_since_split_ = false;
  }
  for (int32_t m : decoded_) {
    Member& member = members_[m];
    member.counter += params_.decode_token_weight * member.decodes * member.inverse_weight;
    member.positions += member.decodes;
    AddServed(m, params_.decode_token_weight * member.decodes);
    if (!member.dirty) {
      member.dirty = true;
      dirty_.push_back(m);
    }
  }
}

void MemberLedger::Flush() {
  for (int32_t m : dirty_) {
    members_[m].dirty = false;
    backlog_.Update(m);
  }
  dirty_.clear();
}

void MemberLedger::AddServed(int32_t m, double tokens) {
  members_[m].served += tokens;
  served_ += tokens;
}

void MemberLedger::Advance(absl::Time now) {
  if (marked_at_ != absl::InfinitePast() && now - marked_at_ < kRecentServiceWindow) return;
  marked_at_ = now;
  for (Member& m : members_) {
    m.served_at_previous_mark = m.served_at_mark;
    m.served_at_mark = m.served;
  }
  served_at_previous_mark_ = served_at_mark_;
  served_at_mark_ = served_;
}

double MemberLedger::RecentServiceShare(int32_t m) const {
  const double total = served_ - served_at_previous_mark_;
  if (total <= 0) return 0;
  const Member& member = members_[m];
  return (member.served - member.served_at_previous_mark) / total * member.inverse_weight;
}

double MemberLedger::Counter(const Entry* e) { return members_[SlotOf(e)].counter; }

double MemberLedger::CounterAfterEviction(const Entry* e) {
  const Member& member = members_[SlotOf(e)];
  return member.counter - ReservedOf(e) * params_.prompt_token_weight * member.inverse_weight;
}

bool MemberLedger::Outweighs(const Entry* victim, const Entry* beneficiary) {
  const int32_t a = SlotOf(victim), b = SlotOf(beneficiary);
  if (a == b) return false;
  const Member& owner = members_[a];
  const Member& taker = members_[b];
  // Once admitted the beneficiary holds its whole context again; a running
  // one is counted already.
  const bool waiting = !beneficiary->running;
  const int64_t need = waiting ? std::max({beneficiary->position, beneficiary->prompt_tokens,
                                           beneficiary->charged_upto})
                               : 0;
  const double owner_share = Share(a, owner.running, owner.positions + owner.reserved);
  const double taker_after =
      Share(b, taker.running + (waiting ? 1 : 0), taker.positions + taker.reserved + need);
  const double entitlement = 1.0 / active_weight_;
  return owner_share > entitlement && taker_after <= 0.5 * entitlement &&
         RecentServiceShare(a) > kRecentServiceFactor * entitlement;
}

bool MemberLedger::QueuesMostOfTheWaiting(const Entry* e) {
  const Member& member = members_[SlotOf(e)];
  return active_weight_ > 0 &&
         member.waiting * member.inverse_weight >
             kRecentServiceFactor / active_weight_ * static_cast<double>(waiting_);
}

double MemberLedger::Share(int32_t m, int64_t running, int64_t tokens) const {
  const double slots = static_cast<double>(running) / params_.max_running;
  const double kv = static_cast<double>(tokens) / static_cast<double>(params_.kv_tokens);
  return std::max(slots, kv) * members_[m].inverse_weight;
}

void MemberLedger::AddService(int32_t m, double charge) {
  if (charge == 0) return;
  Member& member = members_[m];
  member.counter += charge * member.inverse_weight;
  if (!member.dirty) {
    member.dirty = true;
    dirty_.push_back(m);
  }
}

// A member that starts waiting starts no lower than the least-served waiting
// member (or, with none waiting, the member admitted last).
void MemberLedger::Lift(int32_t m) {
  double floor;
  if (!backlog_.empty()) {
    floor = members_[backlog_.Top()].counter;
  } else if (last_admitted_ >= 0) {
    floor = members_[last_admitted_].counter;
  } else {
    return;
  }
  members_[m].counter = std::max(members_[m].counter, floor);
}

}  // namespace hearth::policy_internal

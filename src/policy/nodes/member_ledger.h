// File: src/policy/nodes/member_ledger.h
//
// What the SLO class level knows of each household member across all work
// classes: the service it has received (a Virtual Token Counter with the lift
// rule, as the user level keeps within one class) and what it holds now
// (running sequences, and KV positions computed or reserved for prefill).
// Deadlines order work while they can be met; the ledger is how the class
// level shares the shortage between members when they cannot
// (priority_node_victims.cc, "member guard").
//
// Every call is O(1) but ChargeDecodes (O(batch), O(members in it) when the
// batch repeats) and the lift (O(log members)). Nothing here allocates once
// every member and pool entry has been seen. Not thread-safe.

#ifndef HEARTH_SRC_POLICY_NODES_MEMBER_LEDGER_H_
#define HEARTH_SRC_POLICY_NODES_MEMBER_LEDGER_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "policy/internal/indexed_heap.h"
#include "policy/tree/entry.h"

namespace hearth::policy_internal {

struct MemberLedgerParams {
  // VTC charges per prompt (or reserved prefill) token and per decoded token.
  double prompt_token_weight = 1.0;
  double decode_token_weight = 2.0;
  // Share weight per member by UserId::value(); beyond the end: 1. Each > 0.
  std::vector<double> weights;
  // The capacity shares are measured against: the sequence cap and the KV
  // cache in tokens. Each >= 1.
  int32_t max_running = 1;
  int64_t kv_tokens = 1;
};

class MemberLedger {
 public:
  explicit MemberLedger(MemberLedgerParams params);

  // The waiting set, each entry counted once from arrival (or preemption)
  // until it leaves for good. `new_demand`: the entry arrived or was
  // preempted (not moved between classes), so a member with nothing waiting
  // is lifted to the least-served waiting member: idle time earns no credit.
  void AddWaiting(const Entry* e, bool new_demand);
  void RemoveWaiting(const Entry* e);
  void AddRunning(const Entry* e);
  void RemoveRunning(const Entry* e);
  // Node::Charge / Reserve / ChargeDecodes, with the same meaning. Called
  // after the tree updated the entry's position and reservation.
  void Charge(const Entry* e, int32_t prefill_tokens, int32_t decode_tokens, int32_t prepaid);
  void Reserve(const Entry* e, int32_t tokens);
  void ChargeDecodes(absl::Span<Entry* const> entries, bool repeat);
  // Ends a batch of charges: re-keys the members charged since the last one.
  void Flush();
  // The policy's clock: rolls the window of recent service (Outweighs).
  // O(members) once per window, else O(1).
  void Advance(absl::Time now);

  // The weighted service of `e`'s member (lifted), in VTC counter units.
  double Counter(const Entry* e);
  // Counter() of running `e`'s member once `e` is preempted: the prefill
  // reserved for it and not yet served is given back.
  double CounterAfterEviction(const Entry* e);
  // Whether the member of running `victim` holds more than its entitlement
  // (its weight's part of the active members' weights) while the member of
  // waiting `beneficiary` will hold at most half of its own once that is
  // admitted, both as weighted dominant shares (the larger of the share of
  // the sequence cap and of the KV cache). Active: with waiting or running
  // entries. A running `beneficiary` is asked about as if it were waiting
  // for the room it holds already. Half, not all: members near their
  // shares take turns through natural turnover, and evicting for them
  // (each eviction recomputes a context) tripled a household evening's
  // preemptions for 2 points of voice attainment. And the victim's member
  // must also have received more than kRecentServiceFactor times its
  // entitlement of the service served since the previous window mark
  // (kRecentServiceWindow to twice that ago): holdings alone swing with a
  // few long requests when members are alike, and evicting for such a swing
  // recomputes a context for nothing, while a member that floods the engine
  // has taken the service as well.
  bool Outweighs(const Entry* victim, const Entry* beneficiary);

  // Whether `e`'s member has more than kRecentServiceFactor times its
  // entitlement of the requests waiting (by count, whatever their size: a
  // document is one request however long): one member's queue of two
  // hundred documents, not a member whose one document is long.
  bool QueuesMostOfTheWaiting(const Entry* e);

  static constexpr double kRecentServiceFactor = 1.75;
  static constexpr absl::Duration kRecentServiceWindow = absl::Seconds(30);

 private:
  struct Member {
    double inverse_weight = 1.0;
    double counter = 0;
    int32_t waiting = 0;
    int32_t running = 0;
    // KV positions of running entries, and prefill reserved for them.
    int64_t positions = 0;
    int64_t reserved = 0;
    // Service actually served (VTC-weighted tokens, not lifted, not
    // divided by the member's weight) in all, and at the last two window
    // marks.
    double served = 0;
    double served_at_mark = 0;
    double served_at_previous_mark = 0;
    // This member's entries in the last ChargeDecodes batch.
    int32_t decodes = 0;
    bool dirty = false;
  };
  struct Smaller {
    const std::vector<Member>* members;
    bool operator()(int32_t a, int32_t b) const {
      const double ca = (*members)[a].counter, cb = (*members)[b].counter;
      return ca < cb || (ca == cb && a < b);
    }
  };

  int32_t SlotOf(const Entry* e);
  int32_t& ReservedOf(const Entry* e);
  void AddService(int32_t m, double charge);
  // Service actually served (Member::served), for Outweighs' window.
  void AddServed(int32_t m, double tokens);
  void Lift(int32_t m);
  // Keeps active_weight_ as member `m`'s waiting + running count moves by
  // `delta` (before the move).
  void Activity(int32_t m, int32_t delta);
  // Weighted dominant share of member `m` holding `running` sequences and
  // `tokens` KV positions.
  double Share(int32_t m, int64_t running, int64_t tokens) const;
  // Member `m`'s weighted part of the service since the previous mark.
  double RecentServiceShare(int32_t m) const;

  MemberLedgerParams params_;
  std::vector<Member> members_;
  absl::flat_hash_map<uint32_t, int32_t> index_;
  // Members with waiting entries, least served on top (the lift floor).
  GroupHeap<Smaller> backlog_;
  int32_t last_admitted_ = -1;
  // Weights of the members with waiting or running entries.
  double active_weight_ = 0;
  // Member::waiting's sum.
  int64_t waiting_ = 0;
  // Member::served's sum, its marks, and when the last mark was taken.
  double served_ = 0;
  double served_at_mark_ = 0;
  double served_at_previous_mark_ = 0;
  absl::Time marked_at_ = absl::InfinitePast();
  // Prefill reserved for each running entry, by Entry::index.
  std::vector<int32_t> reserved_of_;
  std::vector<int32_t> dirty_;
  // Members with entries in the last ChargeDecodes batch.
  std::vector<int32_t> decoded_;
  // A running entry left since the batch was split: its counts are stale.
  bool removed_since_split_ = true;
};

}  // namespace hearth::policy_internal

#endif  // HEARTH_SRC_POLICY_NODES_MEMBER_LEDGER_H_

// The member guard's test for a share reclaim (MemberLedger::Outweighs): a
// member holding more than its entitlement is reclaimed from only when it has
// also taken the service, not when a few long requests swing holdings
// between members that are otherwise alike.

#include <cstdint>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/time/time.h"
#include "policy/nodes/member_ledger.h"
#include "policy/tree/entry.h"

namespace hearth::policy_internal {
namespace {

constexpr int32_t kMaxRunning = 8;
constexpr int64_t kKvTokens = 8000;

MemberLedgerParams Params() {
  MemberLedgerParams p;
  p.max_running = kMaxRunning;
  p.kv_tokens = kKvTokens;
  return p;
}

struct Pool {
  std::vector<Entry> entries = std::vector<Entry>(64);
  int32_t next = 0;
  Entry* New(uint32_t user, int32_t prompt) {
    Entry* e = &entries.at(static_cast<size_t>(next));
    e->index = next++;
    e->user = UserId(user);
    e->prompt_tokens = prompt;
    return e;
  }
};

// A new entry of `user` admitted at once, holding `position` positions.
Entry* StartRunning(MemberLedger& ledger, Pool& pool, uint32_t user, int32_t prompt,
                    int32_t position) {
  Entry* e = pool.New(user, prompt);
  ledger.AddWaiting(e, /*new_demand=*/true);
  ledger.RemoveWaiting(e);
  e->running = true;
  e->position = position;
  ledger.AddRunning(e);
  return e;
}

// Running `e` served `tokens` prompt tokens and ended.
void ServeAndEnd(MemberLedger& ledger, Entry* e, int32_t tokens) {
  e->position += tokens;
  ledger.Charge(e, tokens, 0, 0);
  ledger.RemoveRunning(e);
  e->running = false;
}

// Member 0 runs `held` requests of 500 tokens (half the cache and slots at
// 4); both members were served: member 0 `served0` prompt tokens, member 1
// `served1`, a window before the question. Returns whether a waiting request
// of member 1 may reclaim from member 0.
bool Reclaims(int held, int32_t served0, int32_t served1) {
  MemberLedger ledger(Params());
  Pool pool;
  absl::Time now = absl::UnixEpoch();
  ledger.Advance(now);
  for (const auto& [user, tokens] : {std::pair{0u, served0}, std::pair{1u, served1}}) {
    ServeAndEnd(ledger, StartRunning(ledger, pool, user, tokens, 0), tokens);
  }
  ledger.Flush();
  std::vector<Entry*> running;
  for (int i = 0; i < held; ++i) running.push_back(StartRunning(ledger, pool, 0, 500, 500));
  Entry* waiting = pool.New(1, 100);
  ledger.AddWaiting(waiting, true);
  now += MemberLedger::kRecentServiceWindow;
  ledger.Advance(now);
  return ledger.Outweighs(running.front(), waiting);
}

TEST_CASE("member ledger: a share is reclaimed from a member that took the service",
          "[policy]") {
  // Member 0 holds 6 of 8 slots (0.75 > its 0.5): reclaimed from when it
  // also took nine tenths of the service, not when the two were served alike.
  CHECK(Reclaims(6, 9000, 1000));
  CHECK_FALSE(Reclaims(6, 5000, 5000));
  // At the factor's edge: 1.75 x 0.5 of the service is not yet enough.
  CHECK_FALSE(Reclaims(6, 8750, 1250));
  CHECK(Reclaims(6, 8800, 1200));
  // Holding no more than its entitlement, never, whatever it was served.
  CHECK_FALSE(Reclaims(4, 10000, 0));
}

TEST_CASE("member ledger: service older than two windows is forgotten", "[policy]") {
  MemberLedger ledger(Params());
  Pool pool;
  absl::Time now = absl::UnixEpoch();
  ledger.Advance(now);
  Entry* old = StartRunning(ledger, pool, 0, 40000, 0);
  old->position = 40000;
  ledger.Charge(old, 40000, 0, 0);
  ledger.Flush();
  // Two windows later member 0 still holds 6 slots but took its service
  // (40 times member 1's since, which counted in all would be reclaimed
  // from) long ago; member 1 was served meanwhile.
  std::vector<Entry*> running{old};
  for (int i = 0; i < 5; ++i) running.push_back(StartRunning(ledger, pool, 0, 10, 0));
  for (int window = 0; window < 2; ++window) {
    now += MemberLedger::kRecentServiceWindow;
    ledger.Advance(now);
    ServeAndEnd(ledger, StartRunning(ledger, pool, 1, 1000, 0), 1000);
    ledger.Flush();
  }
  Entry* waiting = pool.New(1, 100);
  ledger.AddWaiting(waiting, true);
  CHECK_FALSE(ledger.Outweighs(running.back(), waiting));
}

}  // namespace
}  // namespace hearth::policy_internal

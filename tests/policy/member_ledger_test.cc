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
    Entry* done = pool.New(user, tokens);
    ledger.AddWaiting(done, /*new_demand=*/true);
    ledger.RemoveWaiting(done);
    ledger.AddRunning(done);
    done->running = true;
    done->position = tokens;
    ledger.Charge(done, tokens, 0, 0);
    ledger.RemoveRunning(done);
    done->running = false;
  }
  ledger.Flush();
  std::vector<Entry*> running;
  for (int i = 0; i < held; ++i) {
    Entry* e = pool.New(0, 500);
    ledger.AddWaiting(e, true);
    ledger.RemoveWaiting(e);
    e->running = true;
    e->position = 500;
    ledger.AddRunning(e);
    running.push_back(e);
  }
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
  Entry* old = pool.New(0, 40000);
  ledger.AddWaiting(old, true);
  ledger.RemoveWaiting(old);
  old->running = true;
  ledger.AddRunning(old);
  ledger.Charge(old, 40000, 0, 0);
  ledger.Flush();
  // Two windows later member 0 still holds 6 slots but took its service
  // (40 times member 1's since, which counted in all would be reclaimed
  // from) long ago; member 1 was served meanwhile.
  std::vector<Entry*> running{old};
  for (int i = 0; i < 5; ++i) {
    Entry* e = pool.New(0, 10);
    ledger.AddWaiting(e, true);
    ledger.RemoveWaiting(e);
    e->running = true;
    ledger.AddRunning(e);
    running.push_back(e);
  }
  for (int window = 0; window < 2; ++window) {
    now += MemberLedger::kRecentServiceWindow;
    ledger.Advance(now);
    Entry* other = pool.New(1, 1000);
    ledger.AddWaiting(other, true);
    ledger.RemoveWaiting(other);
    other->running = true;
    ledger.AddRunning(other);
    ledger.Charge(other, 1000, 0, 0);
    ledger.RemoveRunning(other);
    other->running = false;
    ledger.Flush();
  }
  Entry* waiting = pool.New(1, 100);
  ledger.AddWaiting(waiting, true);
  CHECK_FALSE(ledger.Outweighs(running.back(), waiting));
}

}  // namespace
}  // namespace hearth::policy_internal

// Unit tests of MemberTurns: each member's calls beyond its bound wait, in
// arrival order, for that member's own turns; other members never wait for
// them; a deadline takes a waiting call out of line; a turn ends with its
// last copy.

#ifdef HEARTH_SERVE_FOUND

#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "member_turns.h"

namespace hearth::serve {
namespace {

// A deadline already past: Acquire answers at once.
absl::Time Now() { return absl::InfinitePast(); }

TEST_CASE("member turns: at most per_member held per member, members apart", "[serve]") {
  // Property over random sequences: an immediate Acquire succeeds exactly
  // when the member holds fewer than per_member turns.
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    const int per_member = 1 + static_cast<int>(rng() % 3);
    const size_t members = 1 + rng() % 4;
    MemberTurns turns(members, per_member);
    std::vector<std::vector<MemberTurns::Turn>> held(members);
    for (int op = 0; op < 200; ++op) {
      const size_t m = rng() % members;
      if (rng() % 2 == 0 && !held[m].empty()) {
        held[m].erase(held[m].begin() + static_cast<long>(rng() % held[m].size()));
      } else {
        absl::StatusOr<MemberTurns::Turn> t = turns.Acquire(UserId(static_cast<uint32_t>(m)), Now());
        const bool room = static_cast<int>(held[m].size()) < per_member;
        REQUIRE(t.ok() == room);
        if (t.ok()) held[m].push_back(*std::move(t));
        if (!t.ok()) CHECK(t.status().code() == absl::StatusCode::kDeadlineExceeded);
      }
      for (size_t k = 0; k < members; ++k) {
        REQUIRE(turns.held(UserId(static_cast<uint32_t>(k))) == static_cast<int>(held[k].size()));
        REQUIRE(turns.waiting(UserId(static_cast<uint32_t>(k))) == 0);
      }
    }
  }
}

TEST_CASE("member turns: a turn ends with its last copy", "[serve]") {
  MemberTurns turns(1, 1);
  absl::StatusOr<MemberTurns::Turn> t = turns.Acquire(UserId(0), Now());
  REQUIRE(t.ok());
  auto copy = std::make_unique<MemberTurns::Turn>(*t);
  *t = MemberTurns::Turn();
  CHECK(turns.held(UserId(0)) == 1);
  CHECK_FALSE(turns.Acquire(UserId(0), Now()).ok());
  copy.reset();
  CHECK(turns.held(UserId(0)) == 0);
  CHECK(turns.Acquire(UserId(0), Now()).ok());
}

TEST_CASE("member turns: a member out of range is InvalidArgument", "[serve]") {
  MemberTurns turns(2, 1);
  CHECK(turns.Acquire(UserId(2), Now()).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(turns.Acquire(UserId(), Now()).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(turns.held(UserId(5)) == 0);
}

// Waits (without a timed assertion) until `member` has `n` calls in line.
void AwaitWaiting(const MemberTurns& turns, UserId member, int n) {
  while (turns.waiting(member) != n) absl::SleepFor(absl::Milliseconds(1));
}

TEST_CASE("member turns: waiting calls get the member's turns in arrival order, "
          "another member's call does not wait", "[serve][threads]") {
  MemberTurns turns(2, 1);
  absl::StatusOr<MemberTurns::Turn> first = turns.Acquire(UserId(0), Now());
  REQUIRE(first.ok());
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<std::thread> callers;
  for (int i = 0; i < 4; ++i) {
    callers.emplace_back([&, i] {
      // Catch2 assertions stay on the test's thread.
      absl::StatusOr<MemberTurns::Turn> t = turns.Acquire(UserId(0), absl::InfiniteFuture());
      absl::MutexLock lock(&mu);
      order.push_back(t.ok() ? i : -1);
    });
    AwaitWaiting(turns, UserId(0), i + 1);
  }
  // The other member finds its turn free while member 0 has four in line.
  absl::StatusOr<MemberTurns::Turn> other = turns.Acquire(UserId(1), Now());
  CHECK(other.ok());
  *first = MemberTurns::Turn();
  for (std::thread& t : callers) t.join();
  CHECK(order == std::vector<int>{0, 1, 2, 3});
  CHECK(turns.held(UserId(0)) == 0);
  CHECK(turns.waiting(UserId(0)) == 0);
}

TEST_CASE("member turns: a call past its deadline leaves the line and the next one gets the turn",
          "[serve][threads]") {
  MemberTurns turns(1, 1);
  absl::StatusOr<MemberTurns::Turn> first = turns.Acquire(UserId(0), Now());
  REQUIRE(first.ok());
  absl::Status late = turns.Acquire(UserId(0), absl::Now() + absl::Milliseconds(20)).status();
  CHECK(late.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(late.message().find("at most 1 of one member's calls") != absl::string_view::npos);
  CHECK(turns.waiting(UserId(0)) == 0);
  std::atomic<bool> patient_ok{false};
  std::thread patient([&] {
    patient_ok = turns.Acquire(UserId(0), absl::InfiniteFuture()).ok();
  });
  AwaitWaiting(turns, UserId(0), 1);
  *first = MemberTurns::Turn();
  patient.join();
  CHECK(patient_ok);
  CHECK(turns.held(UserId(0)) == 0);
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND

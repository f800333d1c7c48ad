// ClassCapacity on its own: the one predicate admission, growth and borrow
// reclaim share (reading the KV room's ClassBlockLedger), the reservation
// that keeps a hard budget, and the borrower list, checked against a plain
// list under random marks and clears.

#include "scheduler/class_capacity.h"

#include <algorithm>
#include <cstdint>
#include <list>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

namespace hearth::internal {
namespace {

WorkClassConfig Class(int32_t max_running, int32_t budget, bool borrow) {
  WorkClassConfig c;
  c.name = "c";
  c.max_running = max_running;
  c.kv_block_budget = budget;
  c.borrow = borrow;
  return c;
}

TEST_CASE("ClassCapacity: a cap and a budget bound Within, 0 means none", "[scheduler]") {
  const std::vector<WorkClassConfig> classes = {Class(2, 100, true), Class(0, 0, true)};
  ClassBlockLedger blocks(classes);
  ClassCapacity cap(classes, blocks);
  CHECK(cap.Within(0, 2, 100));
  CHECK_FALSE(cap.Within(0, 3, 0));
  CHECK_FALSE(cap.Within(0, 0, 101));
  cap.AddRunning(0, 2);
  blocks.Add(0, 90);
  CHECK(cap.Within(0, 0, 10));
  CHECK_FALSE(cap.Within(0, 1, 0));
  CHECK(cap.RunningWithin(0, 0));
  CHECK_FALSE(cap.RunningWithin(0, 1));
  CHECK_FALSE(cap.Within(0, 0, 11));
  CHECK_FALSE(cap.Over(0));
  // The ledger's blocks are what the predicate reads: no copy to drift.
  blocks.Add(0, 11);
  CHECK(cap.Over(0));
  // The unlimited class is never over, whatever it holds.
  cap.AddRunning(1, 1 << 20);
  blocks.Add(1, 1 << 30);
  CHECK(cap.Within(1, 1, 1));
  CHECK(cap.running(0) == 2);
  CHECK(blocks.held(0) == 101);
}

TEST_CASE("ClassBlockLedger: only a class that may not borrow keeps a hard budget", "[kv]") {
  ClassBlockLedger ledger({Class(0, 100, false), Class(0, 100, true), Class(0, 0, false)});
  CHECK(ledger.has_hard_budget(0));
  CHECK_FALSE(ledger.has_hard_budget(1));
  CHECK_FALSE(ledger.has_hard_budget(2));
  // Without a hard budget nothing is reserved, however large the sequence.
  CHECK(ledger.ReservationFor(1, 1000) == 0);
  CHECK(ledger.ReservationFor(2, 1000) == 0);
  // With one, each admitted sequence reserves its largest size until the
  // reservations fill the budget.
  CHECK(ledger.ReservationFor(0, 60) == 60);
  ledger.Reserve(0, 60);
  CHECK(ledger.ReservationFor(0, 40) == 40);
  CHECK(ledger.ReservationFor(0, 41) == -1);
  ledger.Reserve(0, -60);
  CHECK(ledger.ReservationFor(0, 100) == 100);
  CHECK(ledger.ReservationFor(0, 101) == -1);
  ledger.Add(0, 30);
  CHECK(ledger.hard_room(0) == 70);
}

std::vector<uint32_t> Forward(const ClassCapacity& cap) {
  std::vector<uint32_t> out;
  for (uint32_t s = cap.first_borrower(); s != ClassCapacity::kNone; s = cap.next_borrower(s)) {
    out.push_back(s);
  }
  return out;
}

std::vector<uint32_t> Backward(const ClassCapacity& cap) {
  std::vector<uint32_t> out;
  for (uint32_t s = cap.last_borrower(); s != ClassCapacity::kNone; s = cap.prev_borrower(s)) {
    out.push_back(s);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

TEST_CASE("ClassCapacity: borrowers stay in the order they started borrowing", "[scheduler]") {
  const uint32_t seed = GENERATE(1u, 2u, 3u, 4u, 5u);
  CAPTURE(seed);
  std::mt19937 rng(seed);
  constexpr uint32_t kSlots = 24;
  const std::vector<WorkClassConfig> classes = {Class(1, 0, true)};
  const ClassBlockLedger blocks(classes);
  ClassCapacity cap(classes, blocks);
  cap.ReserveSlots(kSlots);
  for (uint32_t i = 0; i < kSlots; ++i) cap.AddSlot();
  std::list<uint32_t> model;
  for (int op = 0; op < 2000; ++op) {
    const uint32_t slot = rng() % kSlots;
    const bool in = std::find(model.begin(), model.end(), slot) != model.end();
    if (rng() % 2 == 0) {
      cap.MarkBorrowing(slot);  // Marking a borrower again keeps its place.
      if (!in) model.push_back(slot);
    } else {
      cap.ClearBorrowing(slot);  // Clearing a non-borrower changes nothing.
      model.remove(slot);
    }
    REQUIRE(cap.borrowing(slot) == (std::find(model.begin(), model.end(), slot) != model.end()));
    REQUIRE(cap.num_borrowers() == static_cast<int32_t>(model.size()));
    const std::vector<uint32_t> expected(model.begin(), model.end());
    REQUIRE(Forward(cap) == expected);
    REQUIRE(Backward(cap) == expected);
  }
}

}  // namespace
}  // namespace hearth::internal

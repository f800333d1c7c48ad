// SlotRecycler on its own: a freed slot is taken again at once, a held one
// only after its step completed, and no slot is ever handed out twice while
// taken, under random take / free / hold / complete sequences.

#include "scheduler/slot_recycler.h"

#include <cstdint>
#include <map>
#include <random>
#include <set>

#include <catch2/catch.hpp>

namespace hearth::internal {
namespace {

TEST_CASE("SlotRecycler: free slots come back last freed first, held ones after their step",
          "[scheduler]") {
  SlotRecycler r;
  r.Reserve(8, 8);
  CHECK_FALSE(r.Take().has_value());
  r.Free(3);
  r.Free(5);
  CHECK(r.Take() == 5u);
  r.HoldUntil(7, 10);
  r.HoldUntil(8, 12);
  CHECK(r.has_held());
  CHECK(r.Take() == 3u);
  CHECK_FALSE(r.Take().has_value());
  r.StepCompleted(9);
  CHECK_FALSE(r.Take().has_value());
  r.StepCompleted(11);
  CHECK(r.Take() == 7u);
  CHECK(r.num_held() == 1);
  r.StepCompleted(12);
  CHECK_FALSE(r.has_held());
  CHECK(r.Take() == 8u);
}

TEST_CASE("SlotRecycler: no slot is taken twice, none before its step completed",
          "[scheduler]") {
  const uint32_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  std::mt19937 rng(seed);
  SlotRecycler r;
  uint32_t next_new = 0;
  std::set<uint32_t> taken;
  std::map<uint32_t, uint64_t> held;  // slot -> step it waits for
  uint64_t completed = 0;
  for (int op = 0; op < 5000; ++op) {
    switch (rng() % 4) {
      case 0: {
        uint32_t slot;
        if (auto s = r.Take()) {
          slot = *s;
          REQUIRE(held.count(slot) == 0);
        } else {
          slot = next_new++;
        }
        REQUIRE(taken.insert(slot).second);
        break;
      }
      case 1:
      case 2:
        if (!taken.empty()) {
          auto it = taken.begin();
          std::advance(it, static_cast<long>(rng() % taken.size()));
          const uint32_t slot = *it;
          taken.erase(it);
          if (rng() % 2 == 0) {
            r.Free(slot);
          } else {
            const uint64_t until = completed + 1 + rng() % 3;
            r.HoldUntil(slot, until);
            held[slot] = until;
          }
        }
        break;
      default:
        ++completed;
        r.StepCompleted(completed);
        for (auto it = held.begin(); it != held.end();) {
          it = it->second <= completed ? held.erase(it) : std::next(it);
        }
        break;
    }
    REQUIRE(r.num_held() == held.size());
    REQUIRE(r.num_free() + r.num_held() + taken.size() == next_new);
  }
}

}  // namespace
}  // namespace hearth::internal

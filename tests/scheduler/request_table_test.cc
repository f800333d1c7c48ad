// RequestTable on its own: ids find their slots, ended slots are reused
// (after the step holding them), phases are counted, and the run lists stay
// consistent with each record's list and index under random links and
// unlinks, checked against plain sets.

#include "scheduler/request_table.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

namespace hearth::internal {
namespace {

TEST_CASE("RequestTable: slots are found by id and reused once free", "[scheduler]") {
  RequestTable table;
  table.Reserve(8, 4, 4);
  const RequestTable::Taken a = table.TakeSlot();
  CHECK(a.added);
  table[a.slot].id = RequestId(10);
  table.Map(RequestId(10), a.slot);
  const RequestTable::Taken b = table.TakeSlot();
  CHECK(b.added);
  CHECK(b.slot != a.slot);
  table.Map(RequestId(11), b.slot);
  CHECK(table.Find(RequestId(10)) == &table[a.slot]);
  CHECK(table.Find(RequestId(12)) == nullptr);
  CHECK(table.num_live() == 2);
  table.FreeSlot(table.Unmap(RequestId(10)));
  CHECK(table.Find(RequestId(10)) == nullptr);
  const RequestTable::Taken c = table.TakeSlot();
  CHECK_FALSE(c.added);
  CHECK(c.slot == a.slot);
  // A held slot comes back only once its step completed.
  table.HoldSlot(table.Unmap(RequestId(11)), 7);
  CHECK(table.TakeSlot().added);
  table.StepCompleted(6);
  CHECK(table.TakeSlot().added);
  table.StepCompleted(7);
  const RequestTable::Taken d = table.TakeSlot();
  CHECK_FALSE(d.added);
  CHECK(d.slot == b.slot);
}

TEST_CASE("RequestTable: only preparing, waiting and swapped requests are counted", "[scheduler]") {
  RequestTable table;
  table.CountPhaseChange(RequestPhase::kQueued, RequestPhase::kWaiting);
  table.CountPhaseChange(RequestPhase::kQueued, RequestPhase::kPreparing);
  table.CountPhaseChange(RequestPhase::kWaiting, RequestPhase::kRunning);
  table.CountPhaseChange(RequestPhase::kRunning, RequestPhase::kSwapped);
  CHECK(table.count(RequestPhase::kWaiting) == 0);
  CHECK(table.count(RequestPhase::kPreparing) == 1);
  CHECK(table.count(RequestPhase::kSwapped) == 1);
  CHECK(table.count(RequestPhase::kRunning) == 0);
  table.CountPhaseChange(RequestPhase::kSwapped, RequestPhase::kFinished);
  CHECK(table.count(RequestPhase::kSwapped) == 0);
  CHECK(table.count(RequestPhase::kFinished) == 0);
}

TEST_CASE("RequestTable: the run lists match each record's list and index", "[scheduler]") {
  const uint32_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  std::mt19937 rng(seed);
  constexpr uint32_t kSlots = 32;
  RequestTable table;
  table.Reserve(kSlots, kSlots, 0);
  for (uint32_t i = 0; i < kSlots; ++i) table[table.TakeSlot().slot].slot = i;
  std::set<uint32_t> decoding, prefilling;
  for (int op = 0; op < 4000; ++op) {
    const uint32_t slot = rng() % kSlots;
    RequestRecord& r = table[slot];
    if (r.list == RunList::kNone) {
      const RunList to = rng() % 2 == 0 ? RunList::kDecoding : RunList::kPrefilling;
      table.Link(r, to);
      (to == RunList::kDecoding ? decoding : prefilling).insert(slot);
    } else {
      (r.list == RunList::kDecoding ? decoding : prefilling).erase(slot);
      table.Unlink(r);
      REQUIRE(r.list == RunList::kNone);
      REQUIRE(r.list_index == -1);
    }
    REQUIRE(table.running_count() == static_cast<int32_t>(decoding.size() + prefilling.size()));
    for (RunList which : {RunList::kDecoding, RunList::kPrefilling}) {
      const std::vector<uint32_t>& list = table.list(which);
      const std::set<uint32_t>& model = which == RunList::kDecoding ? decoding : prefilling;
      REQUIRE(std::set<uint32_t>(list.begin(), list.end()) == model);
      for (size_t i = 0; i < list.size(); ++i) {
        REQUIRE(table[list[i]].list == which);
        REQUIRE(table[list[i]].list_index == static_cast<int32_t>(i));
      }
    }
  }
}

}  // namespace
}  // namespace hearth::internal

// DeadlineHeap on its own: due entries come out earliest first, ties by
// request id, none before its time, and infinite deadlines are never kept.

#include "scheduler/deadline_heap.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace hearth::internal {
namespace {

TEST_CASE("DeadlineHeap: pops what is due, earliest first, ties by id", "[scheduler]") {
  const absl::Time t0 = absl::UnixEpoch();
  DeadlineHeap h;
  h.Watch(t0 + absl::Seconds(3), RequestId(9));
  h.Watch(absl::InfiniteFuture(), RequestId(1));
  h.Watch(t0 + absl::Seconds(1), RequestId(7));
  h.Watch(t0 + absl::Seconds(1), RequestId(2));
  CHECK(h.size() == 3);
  CHECK_FALSE(h.PopDue(t0).has_value());
  auto a = h.PopDue(t0 + absl::Seconds(2));
  REQUIRE(a.has_value());
  CHECK(a->second == RequestId(2));
  auto b = h.PopDue(t0 + absl::Seconds(2));
  REQUIRE(b.has_value());
  CHECK(b->second == RequestId(7));
  CHECK_FALSE(h.PopDue(t0 + absl::Seconds(2)).has_value());
  CHECK(h.PopDue(absl::InfiniteFuture())->second == RequestId(9));
  CHECK(h.size() == 0);
}

TEST_CASE("DeadlineHeap: random deadlines come out sorted", "[scheduler]") {
  std::mt19937 rng(5);
  const absl::Time t0 = absl::UnixEpoch();
  DeadlineHeap h;
  std::vector<DeadlineHeap::Entry> all;
  for (uint64_t i = 1; i <= 500; ++i) {
    const absl::Time t = t0 + absl::Milliseconds(rng() % 100);
    h.Watch(t, RequestId(i));
    all.emplace_back(t, RequestId(i));
  }
  std::sort(all.begin(), all.end());
  std::vector<DeadlineHeap::Entry> out;
  for (int ms = 0; ms <= 105; ms += 7) {
    while (auto due = h.PopDue(t0 + absl::Milliseconds(ms))) {
      CHECK(due->first <= t0 + absl::Milliseconds(ms));
      out.push_back(*due);
    }
  }
  CHECK(out == all);
}

}  // namespace
}  // namespace hearth::internal

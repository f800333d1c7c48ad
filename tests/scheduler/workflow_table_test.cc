// WorkflowTable on its own: an ended request is found for its retention and
// forgotten after it, a full table forgets its oldest end first, and a
// table without retention remembers nothing.

#include "scheduler/workflow_table.h"

#include <cstdint>

#include <catch2/catch.hpp>

namespace hearth::internal {
namespace {

WorkflowInfo Info(uint64_t root, int32_t depth) {
  return WorkflowInfo{.root = RequestId(root), .arrival_seq = root, .depth = depth,
                      .user = UserId(1)};
}

TEST_CASE("WorkflowTable: an end is remembered for its retention, then forgotten",
          "[scheduler][workflow]") {
  const absl::Time t0 = absl::UnixEpoch();
  WorkflowTable table(absl::Seconds(10), 8);
  table.Remember(RequestId(5), Info(1, 2), t0);
  table.Remember(RequestId(6), Info(1, 3), t0 + absl::Seconds(4));
  const WorkflowInfo* five = table.FindEnded(RequestId(5));
  REQUIRE(five != nullptr);
  CHECK(five->root == RequestId(1));
  CHECK(five->depth == 2);
  CHECK(table.FindEnded(RequestId(7)) == nullptr);
  // Kept through its retention's last instant, forgotten after it.
  table.Expire(t0 + absl::Seconds(10));
  CHECK(table.FindEnded(RequestId(5)) != nullptr);
  table.Expire(t0 + absl::Seconds(11));
  CHECK(table.FindEnded(RequestId(5)) == nullptr);
  CHECK(table.FindEnded(RequestId(6)) != nullptr);
  table.Expire(t0 + absl::Seconds(15));
  CHECK(table.FindEnded(RequestId(6)) == nullptr);
}

TEST_CASE("WorkflowTable: a full table forgets its oldest end first", "[scheduler][workflow]") {
  const absl::Time t0 = absl::UnixEpoch();
  WorkflowTable table(absl::Hours(1), 3);
  for (uint64_t id = 1; id <= 5; ++id) {
    table.Remember(RequestId(id), Info(id, 0), t0 + absl::Seconds(static_cast<int64_t>(id)));
  }
  CHECK(table.FindEnded(RequestId(1)) == nullptr);
  CHECK(table.FindEnded(RequestId(2)) == nullptr);
  for (uint64_t id = 3; id <= 5; ++id) CHECK(table.FindEnded(RequestId(id)) != nullptr);
  // Expiry after wrapping the ring pops in end order too.
  table.Expire(t0 + absl::Hours(1) + absl::Seconds(4) + absl::Milliseconds(1));
  CHECK(table.FindEnded(RequestId(3)) == nullptr);
  CHECK(table.FindEnded(RequestId(4)) == nullptr);
  CHECK(table.FindEnded(RequestId(5)) != nullptr);
}

TEST_CASE("WorkflowTable: without retention nothing is remembered", "[scheduler][workflow]") {
  WorkflowTable table(absl::ZeroDuration(), 4);
  table.Remember(RequestId(1), Info(1, 0), absl::UnixEpoch());
  CHECK(table.FindEnded(RequestId(1)) == nullptr);
  table.Expire(absl::InfiniteFuture());
}

}  // namespace
}  // namespace hearth::internal

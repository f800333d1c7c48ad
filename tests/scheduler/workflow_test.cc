// Agent workflows in the core: which workflow each call joins (parent live,
// parent ended and remembered, parent forgotten), what Submit refuses, and
// the intake rejection of a call whose ended parent belonged to another user.

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

SchedulerOptions TwoUsers() {
  SchedulerOptions o;
  o.users = {{"alice", 1.0}, {"bob", 1.0}};
  o.workflow_retention = absl::Seconds(1);
  return o;
}

std::unique_ptr<SchedulerHarness> Harness(SchedulerOptions o) {
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return std::move(*h);
}

RequestView View(SchedulerHarness& h, RequestId id) {
  absl::StatusOr<RequestView> v = h.scheduler().GetRequest(id);
  REQUIRE(v.ok());
  return *v;
}

TEST_CASE("workflow: a request without a parent starts its own workflow",
          "[scheduler][workflow]") {
  auto h = Harness(TwoUsers());
  RequestId id = *h->Submit(Spec({.user = 0}));
  REQUIRE(h->Step().ok());
  RequestView v = View(*h, id);
  CHECK(v.workflow == id);
  CHECK(v.workflow_depth == 0);
  CHECK(v.workflow_arrival_seq == v.arrival_seq);
  CHECK(v.workflow_arrival_time == v.arrival_time);
}

TEST_CASE("workflow: calls join the workflow of a live or remembered parent",
          "[scheduler][workflow]") {
  auto h = Harness(TwoUsers());
  RequestId root = *h->Submit(Spec({.user = 0, .max_new = 50}));
  REQUIRE(h->Step().ok());
  const RequestView root_view = View(*h, root);

  // The parent is still running.
  RequestId child = *h->Submit(Spec({.user = 0, .parent = root}));
  REQUIRE(h->Step().ok());
  RequestView c = View(*h, child);
  CHECK(c.parent == root);
  CHECK(c.workflow == root);
  CHECK(c.workflow_depth == 1);
  CHECK(c.workflow_arrival_seq == root_view.arrival_seq);
  CHECK(c.workflow_arrival_time == root_view.arrival_time);

  // The parent has ended, within workflow_retention.
  while (h->live().contains(child)) REQUIRE(h->Step().ok());
  RequestId grandchild = *h->Submit(Spec({.user = 0, .parent = child}));
  REQUIRE(h->Step().ok());
  RequestView g = View(*h, grandchild);
  CHECK(g.workflow == root);
  CHECK(g.workflow_depth == 2);
  CHECK(g.workflow_arrival_seq == root_view.arrival_seq);
  REQUIRE(h->RunUntilIdle().ok());
  REQUIRE(h->scheduler().CheckInvariants().ok());
}

TEST_CASE("workflow: a call whose parent ended beyond retention starts anew",
          "[scheduler][workflow]") {
  auto h = Harness(TwoUsers());
  RequestId root = *h->Submit(Spec({.user = 0}));
  REQUIRE(h->RunUntilIdle().ok());
  h->Advance(absl::Seconds(2));  // > workflow_retention
  RequestId late = *h->Submit(Spec({.user = 0, .parent = root}));
  REQUIRE(h->Step().ok());
  RequestView v = View(*h, late);
  CHECK(v.parent == root);
  CHECK(v.workflow == late);
  CHECK(v.workflow_depth == 0);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(late).phase == RequestPhase::kFinished);
}

TEST_CASE("workflow: zero retention joins live parents only",
          "[scheduler][workflow]") {
  SchedulerOptions o = TwoUsers();
  o.workflow_retention = absl::ZeroDuration();
  auto h = Harness(o);
  RequestId root = *h->Submit(Spec({.user = 0, .max_new = 40}));
  REQUIRE(h->Step().ok());
  RequestId live_child = *h->Submit(Spec({.user = 0, .parent = root}));
  REQUIRE(h->RunUntilIdle().ok());
  RequestId after = *h->Submit(Spec({.user = 0, .parent = root}));
  REQUIRE(h->Step().ok());
  CHECK(View(*h, after).workflow == after);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(live_child).phase == RequestPhase::kFinished);
}

TEST_CASE("workflow: Submit refuses parents it never issued and live parents "
          "of another user",
          "[scheduler][workflow]") {
  auto h = Harness(TwoUsers());
  absl::StatusOr<RequestId> unknown = h->Submit(Spec({.user = 0, .parent = RequestId(999)}));
  REQUIRE(unknown.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(unknown.status().message()).find("never issued") != std::string::npos);

  RequestId alices = *h->Submit(Spec({.user = 0, .max_new = 40}));
  absl::StatusOr<RequestId> bobs = h->Submit(Spec({.user = 1, .parent = alices}));
  REQUIRE(bobs.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string message(bobs.status().message());
  // The caller's own name, never the owner's.
  CHECK(message.find("bob") != std::string::npos);
  CHECK(message.find("alice") == std::string::npos);
  // Refused submissions leave nothing behind.
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().size() == 1);
  CHECK(h->scheduler().stats().waiting == 0);
}

TEST_CASE("workflow: a call whose ended parent was another user's is "
          "rejected at intake, with its reason",
          "[scheduler][workflow]") {
  auto h = Harness(TwoUsers());
  RequestId alices = *h->Submit(Spec({.user = 0}));
  REQUIRE(h->RunUntilIdle().ok());
  // The parent has ended, so Submit cannot see its user; the engine thread can.
  RequestId bobs = *h->Submit(Spec({.user = 1, .parent = alices}));
  RequestId fine = *h->Submit(Spec({.user = 1}));
  REQUIRE(h->RunUntilIdle().ok());
  const RequestResult& r = h->results().at(bobs);
  CHECK(r.phase == RequestPhase::kRejected);
  // Bob learns the call was refused, not whose request he named.
  CHECK(r.message.find("not one of user \"bob\"'s requests") != std::string::npos);
  CHECK(r.message.find("alice") == std::string::npos);
  CHECK(r.output_tokens == 0);
  CHECK(h->results().at(fine).phase == RequestPhase::kFinished);
  REQUIRE(h->scheduler().CheckInvariants().ok());
  const SchedulerStats s = h->scheduler().stats();
  CHECK(s.waiting + s.running + s.swapped == 0);
}

TEST_CASE("workflow: Create rejects a negative retention", "[scheduler][workflow]") {
  SchedulerOptions o;
  o.workflow_retention = absl::Seconds(-1);
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(o);
  REQUIRE(s.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.status().message()).find("workflow_retention") != std::string::npos);
}

}  // namespace
}  // namespace hearth

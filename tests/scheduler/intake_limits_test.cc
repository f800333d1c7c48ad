// The intake limits that keep one member from exhausting the house: reserved
// parts of the pending queue, byte bounds, turns at intake, and quota windows
// that stamped arrival times cannot move.

#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

std::unique_ptr<SchedulerHarness> Harness(SchedulerOptions o) {
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return *std::move(h);
}

bool Contains(const absl::Status& s, const std::string& part) {
  return std::string(s.message()).find(part) != std::string::npos;
}

SchedulerOptions TwoUsers() {
  SchedulerOptions o;
  o.users = {{.name = "alice"}, {.name = "bob"}};
  return o;
}

// Submits until refused; returns how many were accepted and the refusal.
int Flood(SchedulerHarness& h, const RequestSpec& spec, absl::Status* refusal) {
  for (int n = 0;; ++n) {
    absl::StatusOr<RequestId> id = h.Submit(spec);
    if (!id.ok()) {
      *refusal = id.status();
      return n;
    }
  }
}

TEST_CASE("A member's flood leaves every other member its reserved room", "[scheduler][intake]") {
  SchedulerOptions o = TwoUsers();
  o.max_pending_requests = 100;  // 25 reserved for each at the default share.
  auto h = Harness(o);
  absl::Status refusal;
  CHECK(Flood(*h, Spec({.user = 0}), &refusal) == 75);
  CHECK(refusal.code() == absl::StatusCode::kResourceExhausted);
  CHECK(Contains(refusal, "beyond its reserved 25"));
  CHECK(Flood(*h, Spec({.user = 1}), &refusal) == 25);
  CHECK(Contains(refusal, "max_pending_requests = 100"));
  REQUIRE(h->scheduler().CheckInvariants().ok());
  // Room comes back as requests end.
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->Submit(Spec({.user = 0})).ok());
}

TEST_CASE("Without a reserved share the queue is first come, first served", "[scheduler][intake]") {
  SchedulerOptions o = TwoUsers();
  o.max_pending_requests = 100;
  o.reserved_pending_share = 0;
  auto h = Harness(o);
  absl::Status refusal;
  CHECK(Flood(*h, Spec({.user = 0}), &refusal) == 100);
  CHECK(h->Submit(Spec({.user = 1})).status().code() == absl::StatusCode::kResourceExhausted);
}

TEST_CASE("Bytes held by queued requests are bounded per member", "[scheduler][intake]") {
  SchedulerOptions o = TwoUsers();
  o.max_pending_bytes = 4000;  // 1000 reserved for each.
  o.max_label_bytes = 100;
  auto h = Harness(o);
  RequestSpec labelled = Spec({.user = 0});
  labelled.label = std::string(100, 'a');
  absl::Status refusal;
  CHECK(Flood(*h, labelled, &refusal) == 30);
  CHECK(Contains(refusal, "bytes of token ids and labels"));
  // 1200 bytes of token ids: more than bob's reserved 1000.
  RequestSpec ids = Spec({.user = 1, .prompt = 300});
  ids.prompt_token_ids.assign(300, 7);
  CHECK(h->Submit(ids).status().code() == absl::StatusCode::kResourceExhausted);
  labelled.user = UserId(1);
  CHECK(Flood(*h, labelled, &refusal) == 10);

  o.max_pending_bytes = 1000;
  h = Harness(o);
  absl::Status too_big = h->Submit(ids).status();
  CHECK(too_big.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Contains(too_big, "max_pending_bytes = 1000"));
}

TEST_CASE("Labels longer than max_label_bytes are refused", "[scheduler][intake]") {
  SchedulerOptions o;
  o.max_label_bytes = 16;
  auto h = Harness(o);
  RequestSpec s = Spec({.user = 0});
  s.label = std::string(16, 'x');
  CHECK(h->Submit(s).ok());
  s.label += 'x';
  absl::Status st = h->Submit(s).status();
  CHECK(st.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Contains(st, "max_label_bytes allows at most 16"));
}

TEST_CASE("Users take turns at intake, so a backlog delays nobody else", "[scheduler][intake]") {
  SchedulerOptions o = TwoUsers();
  o.max_intake_per_plan = 4;
  auto h = Harness(o);
  for (int i = 0; i < 100; ++i) REQUIRE(h->Submit(Spec({.user = 0})).ok());
  RequestId bob = *h->Submit(Spec({.user = 1}));
  REQUIRE(h->Step().ok());
  CHECK(h->last_plan().Find(bob) != nullptr);
  CHECK(h->last_plan().sequences.size() == 4);
  CHECK(h->scheduler().stats().queued == 97);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().size() == 101);
}

TEST_CASE("A request cancelled while queued ends when Plan takes it in", "[scheduler][intake]") {
  SchedulerOptions o;
  o.max_intake_per_plan = 1;
  auto h = Harness(o);
  RequestId first = *h->Submit(Spec({.user = 0}));
  RequestId second = *h->Submit(Spec({.user = 0}));
  REQUIRE(h->scheduler().Cancel(second).ok());
  CHECK(h->scheduler().Cancel(second).code() == absl::StatusCode::kNotFound);
  REQUIRE(h->Step().ok());
  CHECK(h->last_plan().Find(first) != nullptr);
  CHECK(h->scheduler().GetRequest(second)->phase == RequestPhase::kQueued);
  REQUIRE(h->Step().ok());
  REQUIRE(h->results().contains(second));
  CHECK(h->results().at(second).phase == RequestPhase::kCancelled);
  CHECK(h->results().at(second).message == "cancelled by the host while queued");
}

TEST_CASE("Stamped arrival times neither dodge nor move quota windows", "[scheduler][intake]") {
  SchedulerOptions o = TwoUsers();
  o.users[0].token_quota = 100;
  o.users[0].quota_window = absl::Hours(1);
  auto h = Harness(o);
  h->Advance(absl::Hours(10) + absl::Minutes(30));
  REQUIRE(h->Step().ok());
  const absl::Time now = h->now();

  RequestSpec past = Spec({.user = 0, .prompt = 10, .max_new = 50});
  past.arrival_time = now - absl::Hours(5);
  CHECK(h->Submit(past).ok());
  past.arrival_time = now - absl::Hours(3);
  CHECK(h->Submit(past).status().code() == absl::StatusCode::kResourceExhausted);

  RequestSpec never = Spec({.user = 0, .prompt = 1, .max_new = 1});
  never.arrival_time = absl::InfiniteFuture();
  absl::Status st = h->Submit(never).status();
  CHECK(st.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Contains(st, "arrival_time is InfiniteFuture"));

  // A far-future stamp is refused at intake and leaves the window alone.
  RequestSpec future = Spec({.user = 0, .prompt = 10, .max_new = 10});
  future.arrival_time = now + absl::Hours(48);
  RequestId far = *h->Submit(future);
  RequestSpec soon = Spec({.user = 1});
  soon.arrival_time = now + absl::Seconds(30);
  RequestId near = *h->Submit(soon);
  REQUIRE(h->Step().ok());
  REQUIRE(h->results().contains(far));
  CHECK(h->results().at(far).phase == RequestPhase::kRejected);
  CHECK(Contains(absl::InvalidArgumentError(h->results().at(far).message), "max_arrival_lead"));
  CHECK(h->last_plan().Find(near) != nullptr);
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().at(near).phase == RequestPhase::kFinished);
  CHECK(h->Submit(past).status().code() == absl::StatusCode::kResourceExhausted);
}

// Found by the options fuzzer: a byte bound near INT64_MAX with the whole of
// it reserved wrapped the reservation's cast and the fit test's sum.
TEST_CASE("Limits at the integer extremes neither wrap nor refuse", "[scheduler][intake]") {
  SchedulerOptions o = TwoUsers();
  o.max_pending_bytes = std::numeric_limits<int64_t>::max();
  o.reserved_pending_share = 1;
  o.users[0].token_quota = std::numeric_limits<int64_t>::max();
  o.users[1].weight = 1e9;
  auto h = Harness(o);
  for (uint32_t user : {0u, 1u, 1u}) {
    RequestSpec s = Spec({.user = user});
    s.label = "extreme";
    REQUIRE(h->Submit(s).ok());
  }
  // Bob's weight reserves all but one of the 65,536 requests: that one is
  // alice's, and she has it.
  CHECK(h->Submit(Spec({.user = 0})).status().code() == absl::StatusCode::kResourceExhausted);
  REQUIRE(h->scheduler().CheckInvariants().ok());
  REQUIRE(h->RunUntilIdle().ok());
  CHECK(h->results().size() == 3);

  // One user reserving all of it: INT64_MAX as a double is 2^63, one past
  // what an int64 holds.
  SchedulerOptions one;
  one.max_pending_bytes = std::numeric_limits<int64_t>::max();
  one.reserved_pending_share = 1;
  h = Harness(one);
  RequestSpec labelled = Spec({.user = 0});
  labelled.label = "x";
  REQUIRE(h->Submit(labelled).ok());
  REQUIRE(h->scheduler().CheckInvariants().ok());
}

TEST_CASE("Default options schedule members fairly", "[scheduler][intake]") {
  auto scheduler = Scheduler::Create(SchedulerOptions{});
  REQUIRE(scheduler.ok());
  CHECK((*scheduler)->policy_name() == "household");
}

}  // namespace
}  // namespace hearth

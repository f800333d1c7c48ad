// Holds (RequestSpec::hold, Scheduler::Release): a request that is not
// ready yet (its grammar compiling, its KV loading elsewhere) is known and
// timed but takes no running slot, no KV and no budget until released; then
// it runs as if it had just arrived, with its original arrival time.

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

SchedulerOptions Options(int32_t max_running = 8) {
  SchedulerOptions o;
  o.kv.num_device_blocks = 64;
  o.max_running = max_running;
  o.max_batched_tokens = 256;
  return o;
}

RequestSpec Held(int32_t prompt = 16, int32_t max_new = 4) {
  RequestSpec spec = Spec({.prompt = prompt, .max_new = max_new});
  spec.hold = true;
  return spec;
}

bool InPlan(const SchedulerHarness& h, RequestId id) {
  for (const auto& s : h.last_plan().sequences) {
    if (s.id == id) return true;
  }
  return false;
}

TEST_CASE("Holds: a held request takes no slot until released, then runs", "[scheduler]") {
  auto h = *SchedulerHarness::Create(Options(/*max_running=*/1));
  const RequestId held = *h->Submit(Held());
  const RequestId other = *h->Submit(Spec({.prompt = 16, .max_new = 3}));
  REQUIRE(h->Step().ok());
  // The one running slot went to the request that is ready.
  CHECK(InPlan(*h, other));
  CHECK_FALSE(InPlan(*h, held));
  CHECK(h->scheduler().stats().held == 1);
  CHECK(h->scheduler().GetRequest(held)->phase == RequestPhase::kHeld);
  for (int i = 0; i < 10; ++i) {
    REQUIRE(h->Step().ok());
    CHECK_FALSE(InPlan(*h, held));
  }
  REQUIRE(h->results().contains(other));
  // Only the held request is live: nothing is due, so the engine may sleep.
  CHECK(h->scheduler().NextEventTime() == absl::InfiniteFuture());
  REQUIRE(h->scheduler().Release(held).ok());
  CHECK(h->scheduler().NextEventTime() == absl::InfinitePast());
  REQUIRE(h->RunUntilIdle(100).ok());
  const RequestResult& r = h->results().at(held);
  CHECK(r.phase == RequestPhase::kFinished);
  CHECK(r.output_tokens == 4);
  // Its arrival is when it was submitted, not when it was released.
  CHECK(r.arrival_time == absl::UnixEpoch());
  CHECK(r.first_admit_time > h->results().at(other).end_time - absl::Milliseconds(1));
  CHECK(h->scheduler().stats().held == 0);
}

TEST_CASE("Holds: released before any Plan, a request is taken in ready", "[scheduler]") {
  auto h = *SchedulerHarness::Create(Options());
  const RequestId id = *h->Submit(Held());
  REQUIRE(h->scheduler().Release(id).ok());
  REQUIRE(h->Step().ok());
  CHECK(InPlan(*h, id));
  CHECK(h->scheduler().stats().held == 0);
}

TEST_CASE("Holds: Release's refusals", "[scheduler]") {
  auto h = *SchedulerHarness::Create(Options());
  const RequestId plain = *h->Submit(Spec({}));
  const RequestId held = *h->Submit(Held());
  CHECK(absl::IsNotFound(h->scheduler().Release(RequestId(999))));
  absl::Status not_held = h->scheduler().Release(plain);
  CHECK(absl::IsFailedPrecondition(not_held));
  CHECK_THAT(std::string(not_held.message()), Catch::Contains("not held"));
  REQUIRE(h->scheduler().Release(held).ok());
  CHECK(absl::IsFailedPrecondition(h->scheduler().Release(held)));  // twice
  const RequestId cancelled = *h->Submit(Held());
  REQUIRE(h->scheduler().Cancel(cancelled).ok());
  CHECK(absl::IsNotFound(h->scheduler().Release(cancelled)));
  REQUIRE(h->RunUntilIdle(100).ok());
  CHECK(h->results().at(cancelled).phase == RequestPhase::kCancelled);
  CHECK(absl::IsNotFound(h->scheduler().Release(held)));  // ended
}

TEST_CASE("Holds: cancelled, timed out and changed while held, each ends once", "[scheduler]") {
  SchedulerOptions o = Options();
  o.work_classes = {{"chat", 1}, {"voice", 2}};
  o.work_classes[1].queue_timeout = absl::Seconds(2);
  auto h = *SchedulerHarness::Create(o);
  const RequestId cancel_me = *h->Submit(Held());
  RequestSpec impatient = Held();
  impatient.work_class = WorkClassId(1);
  const RequestId times_out = *h->Submit(impatient);
  RequestSpec dated = Held();
  dated.deadline = absl::UnixEpoch() + absl::Seconds(1);
  const RequestId deadline = *h->Submit(dated);
  const RequestId moved = *h->Submit(Held());
  REQUIRE(h->Step().ok());
  CHECK(h->scheduler().stats().held == 4);
  // Held requests with timers: the engine's next event is the earliest.
  CHECK(h->scheduler().NextEventTime() == absl::UnixEpoch() + absl::Seconds(1));
  REQUIRE(h->scheduler().Cancel(cancel_me, "member left").ok());
  REQUIRE(h->scheduler().SetWorkClass(moved, WorkClassId(1)).ok());
  REQUIRE(h->scheduler().SetPriority(moved, 5).ok());
  h->Advance(absl::Seconds(3));
  REQUIRE(h->Step().ok());
  CHECK(h->results().at(cancel_me).phase == RequestPhase::kCancelled);
  CHECK(h->results().at(deadline).phase == RequestPhase::kTimedOut);
  CHECK_THAT(h->results().at(deadline).message, Catch::Contains("passed while held"));
  CHECK(h->results().at(times_out).phase == RequestPhase::kTimedOut);
  CHECK_THAT(h->results().at(times_out).message,
             Catch::StartsWith("held ") && Catch::Contains("without being released"));
  // Moved to voice after three seconds held: its queue timeout (from
  // arrival) has passed as well.
  CHECK(h->results().at(moved).phase == RequestPhase::kTimedOut);
  CHECK(h->scheduler().stats().held == 0);
  CHECK(h->scheduler().CheckInvariants().ok());
}

TEST_CASE("Holds: a released request keeps changes made while it was held", "[scheduler]") {
  SchedulerOptions o = Options(/*max_running=*/1);
  o.work_classes = {{"chat", 1}, {"voice", 2}};
  auto h = *SchedulerHarness::Create(o);
  const RequestId id = *h->Submit(Held());
  REQUIRE(h->Step().ok());
  REQUIRE(h->scheduler().SetWorkClass(id, WorkClassId(1)).ok());
  REQUIRE(h->scheduler().Release(id).ok());
  REQUIRE(h->Step().ok());
  CHECK(InPlan(*h, id));
  REQUIRE(h->RunUntilIdle(100).ok());
  CHECK(h->results().at(id).work_class == WorkClassId(1));
  CHECK(h->results().at(id).phase == RequestPhase::kFinished);
}

TEST_CASE("Holds: WaitForWork sleeps while only held requests are live, and Release wakes it",
          "[scheduler]") {
  auto h = *SchedulerHarness::Create(Options());
  const RequestId id = *h->Submit(Held());
  REQUIRE(h->Step().ok());
  Scheduler& s = h->scheduler();
  // Nothing to do: a short wait times out instead of returning at once.
  CHECK(s.NextEventTime() == absl::InfiniteFuture());
  s.WaitForWork(absl::ZeroDuration());  // takes the wake-up the Submit left
  CHECK_FALSE(s.WaitForWork(absl::Milliseconds(5)));
  REQUIRE(s.Release(id).ok());
  CHECK(s.WaitForWork(absl::InfiniteDuration()));  // woken by the release
}

}  // namespace
}  // namespace hearth
